#pragma once
// Selective prediction at a glance: keeping only forecasts at least as confident as a threshold, how many are kept
// (coverage) and how many of those are wrong (risk). A surrogate that knows when it is unsure has a curve that
// starts low and rises late; the area under it (AURC) is in the title, the risk with every forecast kept is the
// dashed line the curve should stay under.

#include "core/metrics.h"
#include "widgets/plot_widget.h"

#include <vector>

class QCPGraph;

namespace kerncast {

class RiskCoveragePlot : public PlotWidget {
    Q_OBJECT
public:
    explicit RiskCoveragePlot(QWidget* parent = nullptr);
    ~RiskCoveragePlot() override;

    // The curve as compute_metrics() makes it, in any order; points that are not finite are left out.
    void setCurve(const std::vector<RiskCoveragePoint>& points, double aurc);
    void setMetrics(const ForecastMetrics& metrics) { setCurve(metrics.risk_coverage, metrics.aurc); }
    void clear() { setCurve({}, 0); }

    // The step line (coverage, risk) and the full-coverage risk line, for tests.
    QCPGraph* curve() const { return m_curve; }
    QCPGraph* fullCoverageLine() const { return m_fullCoverage; }

private:
    QCPGraph* m_curve = nullptr;
    QCPGraph* m_fullCoverage = nullptr;
};

}  // namespace kerncast
