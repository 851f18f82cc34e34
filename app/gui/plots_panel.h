#pragma once
// The Plots dock: forecast vs measured, reliability, risk-coverage and search progress as tabs, an Export button,
// and a line with the metrics of the measured forecasts. The plots are recomputed from the population's rows; over
// a large run the calibration is worked out off the GUI thread (only the latest result is shown).

#include "app/gui/latest_result.h"
#include "core/metrics.h"
#include "widgets/candidate_row.h"
#include "widgets/search_progress_plot.h"

#include <QWidget>

#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QLocale;
class QTabWidget;

namespace kerncast {

class ForecastScatterPlot;
class ReliabilityPlot;
class RiskCoveragePlot;
class ParameterPlot;

class PlotsPanel : public QWidget {
    Q_OBJECT
public:
    // Above this many rows the metrics are computed in the background.
    static constexpr int kBackgroundMetricsRows = 20000;

    explicit PlotsPanel(QWidget* parent = nullptr);

    ForecastScatterPlot* scatter() const { return m_scatter; }
    ReliabilityPlot* reliability() const { return m_reliability; }
    RiskCoveragePlot* riskCoverage() const { return m_riskCoverage; }
    SearchProgressPlot* progress() const { return m_progressPlot; }
    ParameterPlot* parameters() const { return m_parameters; }
    QTabWidget* tabs() const { return m_tabs; }
    // Which plot is shown (the tab widget's bar is hidden: names are chosen from this list).
    QComboBox* chooser() const { return m_chooser; }
    QLabel* metricsLabel() const { return m_metricsLabel; }
    // The metrics of the shown run's measured forecasts, as the plots show them.
    const ForecastMetrics& metrics() const { return m_metrics; }
    // The same on the ε-audited candidates alone (a random share of those the gate trusted), shown in the line
    // under the plots beside the first: the plots' sample is the gate's choice, biased towards unsure forecasts.
    const ForecastMetrics& auditedMetrics() const { return m_auditedMetrics; }

    // No run shown.
    void clear();
    // Redraws the scatter, the progress curve (measured: the run's measurements so far) and the calibration plots
    // from the rows.
    void refresh(const std::vector<CandidateRow>& rows, const BinScheme& scheme, const std::string& pack,
                 const std::vector<ProgressPoint>& progress, int64_t measured);
    void setSelected(qint64 candidateId);
    void showReliability();

Q_SIGNALS:
    void candidateClicked(qint64 candidateId);
    // New metrics are shown (after a refresh; later when computed in the background).
    void metricsShown(const kerncast::ForecastMetrics& metrics);

private:
    struct Metrics {
        ForecastMetrics all, audited;
        bool gated = false;  // the gate trusted some candidate: the audit line is shown
    };
    void showMetrics(const Metrics& metrics, bool anyRows);
    QString auditedText(const QLocale& locale) const;

    QTabWidget* m_tabs = nullptr;
    QComboBox* m_chooser = nullptr;
    ForecastScatterPlot* m_scatter = nullptr;
    ReliabilityPlot* m_reliability = nullptr;
    RiskCoveragePlot* m_riskCoverage = nullptr;
    SearchProgressPlot* m_progressPlot = nullptr;
    ParameterPlot* m_parameters = nullptr;
    QLabel* m_metricsLabel = nullptr;
    ForecastMetrics m_metrics;
    ForecastMetrics m_auditedMetrics;
    LatestResult<Metrics> m_metricsJob{this};
};

}  // namespace kerncast
