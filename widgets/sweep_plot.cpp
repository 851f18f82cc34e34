#include "widgets/sweep_plot.h"

#include "widgets/qcustomplot_include.h"

#include <algorithm>
#include <cmath>

namespace kerncast {

SweepPlot::SweepPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    x->setScaleType(QCPAxis::stLogarithmic);
    auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
    ticker->setLogBase(2);
    x->setTicker(ticker);

    m_parity = plot->addGraph(x, y);
    m_parity->setPen(QPen(referenceColor(), 1.2, Qt::DashLine));
    m_parity->setName(tr("Reference (1x)"));

    m_speedups = plot->addGraph(x, y);
    m_speedups->setPen(QPen(measuredColor(), 2));
    m_speedups->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
    m_speedups->setName(tr("Speedup"));

    m_failures = plot->addGraph(x, y);
    m_failures->setLineStyle(QCPGraph::lsNone);
    m_failures->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(Qt::red, 2), QBrush(), 10));
    m_failures->setName(tr("Failed at this size"));

    setPlaceholderText(tr("No sweep of this candidate yet (kerncast-cli sweep --run ...)"));
    showLegend(Qt::AlignTop | Qt::AlignRight);
    setSweep({}, QString());
}

SweepPlot::~SweepPlot() = default;

void SweepPlot::setSweep(const std::vector<SweepPoint>& points, const QString& sizeName) {
    std::vector<SweepPoint> sorted;
    for (const SweepPoint& p : points)
        if (p.size > 0 && std::isfinite(p.size) && std::isfinite(p.speedup))
            sorted.push_back(p);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const SweepPoint& a, const SweepPoint& b) { return a.size < b.size; });
    QVector<double> okSize, okSpeedup, failedSize, failedAt;
    double top = 1.0;
    for (const SweepPoint& p : sorted) {
        if (p.speedup > 0) {
            okSize.append(p.size);
            okSpeedup.append(p.speedup);
            top = std::max(top, p.speedup);
        } else {
            failedSize.append(p.size);
            failedAt.append(1.0);
        }
    }
    m_speedups->setData(okSize, okSpeedup, true);
    m_failures->setData(failedSize, failedAt, true);
    const bool hasData = !sorted.empty();
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    if (hasData) {
        const double lo = sorted.front().size / 1.5, hi = sorted.back().size * 1.5;
        x->setRange(lo, hi);
        m_parity->setData(QVector<double>{lo, hi}, QVector<double>{1.0, 1.0}, true);
    } else {
        x->setRange(1, 1024);
        m_parity->data()->clear();
    }
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(0, top * 1.2);
    setAxisLabels(sizeName.isEmpty() ? tr("Size") : sizeName, tr("Speedup over the reference"));
    setTitleText(hasData ? tr("Speedup across %n size(s)", nullptr, static_cast<int>(sorted.size()))
                         : tr("Speedup across sizes"));
    setHasData(hasData);
    replot();
}

}  // namespace kerncast
