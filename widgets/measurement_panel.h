#pragma once
// What the device said about one candidate, as a kernel engineer reads it in a profiler: the timing samples and
// their spread (median, confidence interval, p10/p90, every sample), the reference's time and the speedup, the share
// of the roofline the median reaches, the worker's verdict on correctness (seeds checked, largest errors), the
// static report per kernel (registers, shared memory, spills), the device, its clocks and where the time went.

#include "core/measurement.h"
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

    // The candidate's latest measurement (none: not measured yet) and its static report.
    void setMeasurement(const std::optional<Measurement>& measurement, const std::vector<StaticReport>& kernels);
    void clear();
    // The text shown, for tests and copying.
    QString text() const;

private:
    QTextBrowser* m_view = nullptr;
};

}  // namespace kerncast
