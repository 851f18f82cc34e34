#pragma once
// How a kernel holds across sizes (kerncast-cli sweep): its speedup over the reference against the size that varies,
// one point per measured size on a log-2 axis, the dashed line at 1x where it stops being the faster kernel. Sizes
// where it failed (incorrect, crashed) are marked on that line in red, so an overfit kernel shows at a glance.

#include "widgets/plot_widget.h"

#include <QString>

#include <vector>

class QCPGraph;

namespace kerncast {

struct SweepPoint {
    double size = 0;     // the value of the size that varies
    double speedup = 0;  // over the reference; 0 when the kernel failed at this size
    QString status;      // "ok", "incorrect", ...
};

class SweepPlot : public PlotWidget {
    Q_OBJECT
public:
    explicit SweepPlot(QWidget* parent = nullptr);
    ~SweepPlot() override;

    // The points of one sweep, in any order; `sizeName` labels the axis. Points with a size <= 0 are left out.
    void setSweep(const std::vector<SweepPoint>& points, const QString& sizeName);
    void clear() { setSweep({}, QString()); }

    QCPGraph* speedups() const { return m_speedups; }
    QCPGraph* failures() const { return m_failures; }

private:
    QCPGraph* m_speedups = nullptr;
    QCPGraph* m_failures = nullptr;
    QCPGraph* m_parity = nullptr;
};

}  // namespace kerncast
