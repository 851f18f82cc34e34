#include "widgets/search_progress_plot.h"

#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"

#include <algorithm>
#include <cmath>

namespace kerncast {

SearchProgressPlot::SearchProgressPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    setTitleText(tr("Best speedup vs GPU measurements"));
    setAxisLabels(tr("GPU measurements"), tr("Best measured speedup"));
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    auto countTicker = QSharedPointer<QCPAxisTickerFixed>::create();
    countTicker->setTickStep(1);
    countTicker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);  // whole measurements only
    x->setTicker(countTicker);
    y->setTicker(QSharedPointer<SpeedupTicker>::create(SpeedupTicker::Scale::Linear));
    y->ticker()->setTickCount(7);

    // ×1 is the reference kernel: a search below it has found nothing better yet.
    m_reference = new QCPItemStraightLine(plot);
    m_reference->point1->setCoords(0, 1);
    m_reference->point2->setCoords(1, 1);
    m_reference->setPen(QPen(QColor(0xa8, 0xa8, 0xa8), 1));
    m_reference->setSelectable(false);

    m_baseline = plot->addGraph(x, y);
    m_baseline->setLineStyle(QCPGraph::lsStepLeft);
    m_baseline->setPen(QPen(referenceColor(), 1.6, Qt::DashLine));
    m_baseline->setName(tr("Measure-all"));
    m_baseline->removeFromLegend();

    m_progress = plot->addGraph(x, y);
    m_progress->setLineStyle(QCPGraph::lsStepLeft);
    m_progress->setPen(QPen(forecastColor(), 2.2));
    m_progress->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, forecastColor(), forecastColor(), 5));
    m_progress->setName(tr("This run"));

    showLegend(Qt::AlignBottom | Qt::AlignRight);
    setZoomable(true);
    update();
}

SearchProgressPlot::~SearchProgressPlot() = default;

void SearchProgressPlot::setSteps(QCPGraph* graph, const std::vector<ProgressPoint>& points, int64_t extendTo) {
    std::vector<ProgressPoint> sorted;
    for (const ProgressPoint& p : points)
        if (p.best_speedup > 0 && std::isfinite(p.best_speedup))
            sorted.push_back(p);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const ProgressPoint& a, const ProgressPoint& b) { return a.measurements < b.measurements; });
    QVector<double> keys, values;
    for (const ProgressPoint& p : sorted) {
        keys.append(static_cast<double>(p.measurements));
        values.append(p.best_speedup);
    }
    if (!sorted.empty() && extendTo > sorted.back().measurements) {
        keys.append(static_cast<double>(extendTo));
        values.append(sorted.back().best_speedup);
    }
    graph->setData(keys, values, true);
}

void SearchProgressPlot::setProgress(const std::vector<ProgressPoint>& points, int64_t measurementsSoFar) {
    setSteps(m_progress, points, measurementsSoFar);
    update();
}

void SearchProgressPlot::setBaseline(const std::vector<ProgressPoint>& points, int64_t measurements,
                                     const QString& name) {
    setSteps(m_baseline, points, measurements);
    m_baseline->setName(name.isEmpty() ? tr("Measure-all") : name);
    if (hasBaseline())
        m_baseline->addToLegend();
    else
        m_baseline->removeFromLegend();
    update();
}

bool SearchProgressPlot::hasBaseline() const { return !m_baseline->data()->isEmpty(); }

void SearchProgressPlot::clear() {
    setSteps(m_progress, {}, -1);
    clearBaseline();
}

void SearchProgressPlot::update() {
    const bool hasProgress = !m_progress->data()->isEmpty();
    // The run's own curve is what the plot is about; a baseline alone still waits for the run.
    setHasData(hasProgress || hasBaseline());
    if (hasProgress) {
        double best = 0;
        for (const QCPGraphData& d : *m_progress->data())
            best = std::max(best, d.value);
        const auto last = static_cast<qlonglong>((m_progress->data()->constEnd() - 1)->key);
        const QString bestText = formatSpeedup(best, locale());
        setTitleText(last == 1
                         ? tr("Best speedup %1 after 1 GPU measurement").arg(bestText)
                         : tr("Best speedup %1 after %2 GPU measurements").arg(bestText, locale().toString(last)));
    } else {
        setTitleText(tr("Best speedup vs GPU measurements"));
    }
    fitViewUnlessMoved();
    replot();
}

void SearchProgressPlot::fitView() {
    double maxKey = 10, lo = 1, hi = 1;
    for (const QCPGraph* graph : {m_progress, m_baseline})
        for (const QCPGraphData& d : *graph->data()) {
            maxKey = std::max(maxKey, d.key);
            lo = std::min(lo, d.value);
            hi = std::max(hi, d.value);
        }
    const double span = std::max(hi - lo, 0.5);
    mainAxisRect()->axis(QCPAxis::atBottom)->setRange(0, maxKey * 1.03);
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(std::max(0.0, lo - 0.08 * span), hi + 0.12 * span);
}

}  // namespace kerncast
