#pragma once
// What the device said about one candidate, as a kernel engineer reads it in a profiler: the timing samples and
// their spread (median, confidence interval, p10/p90, every sample), the reference's time and the speedup, the
// achieved bandwidth and arithmetic rate and the share of the roofline the median reaches, the worker's verdict on
// correctness per case and seed (seeds checked, largest errors), the static report per kernel (registers, shared
// memory, spills), the device, its clocks and where the time went. What the run file does not hold is said, not
// left out: the worker stores the largest error over every case, not each case's.

#include "core/measurement.h"
#include "core/problem.h"
#include "core/static_report.h"

#include <QWidget>

#include <optional>
#include <vector>

class QTextBrowser;

namespace kerncast {

class MeasurementPanel : public QWidget {
    Q_OBJECT
public:
    explicit MeasurementPanel(QWidget* parent = nullptr);

    // The candidate's latest measurement (none: not measured yet) and its static report; with the run's problem
    // (its bytes, flops and cases), the achieved rates and the verdict per case and seed.
    void setMeasurement(const std::optional<Measurement>& measurement, const std::vector<StaticReport>& kernels,
                        const Problem* problem = nullptr);
    void clear();
    // The text shown, for tests and copying.
    QString text() const;

private:
    // The worker's verdict on each correctness case and the benchmark case (what passed on which seeds, where it
    // stopped), worked out from the seeds it counted and the case its failure names; "" when nothing was verified.
    static QString verdictsHtml(const Measurement& m, const Problem& problem);

    QTextBrowser* m_view = nullptr;
};

}  // namespace kerncast
