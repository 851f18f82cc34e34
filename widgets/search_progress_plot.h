#pragma once
// How a search pays off: the best measured speedup against the GPU measurements spent so far (a step line: the best
// holds until a measurement beats it), optionally beside the measure-all baseline of the same problem, so that a
// gated run shows how much GPU time its forecasts saved.

#include "widgets/plot_widget.h"

#include <cstdint>
#include <vector>

class QCPGraph;
class QCPItemStraightLine;

namespace kerncast {

struct ProgressPoint {
    int64_t measurements = 0;  // GPU measurements spent when this best was reached
    double best_speedup = 0;   // best measured correct speedup so far; <= 0 (none yet) is not drawn
};

class SearchProgressPlot : public PlotWidget {
    Q_OBJECT
public:
    explicit SearchProgressPlot(QWidget* parent = nullptr);
    ~SearchProgressPlot() override;

    // The run's best-so-far curve (any order). measurementsSoFar, when larger than the last point, carries the
    // last best on to it, so a long stretch without improvement shows as such.
    void setProgress(const std::vector<ProgressPoint>& points, int64_t measurementsSoFar = -1);
    // The measure-all baseline of the same problem, carried on to its total measurements like setProgress(); an
    // empty vector removes it. name defaults to "Measure-all".
    void setBaseline(const std::vector<ProgressPoint>& points, int64_t measurements = -1, const QString& name = {});
    void clearBaseline() { setBaseline({}); }
    bool hasBaseline() const;
    void clear();

    QCPGraph* progressGraph() const { return m_progress; }
    QCPGraph* baselineGraph() const { return m_baseline; }

protected:
    void fitView() override;

private:
    static void setSteps(QCPGraph* graph, const std::vector<ProgressPoint>& points, int64_t extendTo);
    void update();

    QCPGraph* m_progress = nullptr;
    QCPGraph* m_baseline = nullptr;
    QCPItemStraightLine* m_reference = nullptr;
};

}  // namespace kerncast
