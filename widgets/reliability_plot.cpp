#include "widgets/reliability_plot.h"

#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"

#include <algorithm>
#include <cmath>

namespace kerncast {

ReliabilityPlot::ReliabilityPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    QCPAxisRect* rect = mainAxisRect();

    // Counts live in a short axis rect of their own under the diagram, sharing its confidence axis.
    m_countRect = new QCPAxisRect(plot);
    plot->plotLayout()->addElement(2, 0, m_countRect);
    plot->plotLayout()->setRowStretchFactors({1, 3.2, 1});
    styleAxisRect(m_countRect);
    auto* margins = new QCPMarginGroup(plot);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    m_countRect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    rect->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msTop);
    rect->setMargins(QMargins(0, 0, 0, 2));
    m_countRect->setAutoMargins(QCP::msLeft | QCP::msRight | QCP::msBottom);
    m_countRect->setMargins(QMargins(0, 10, 0, 0));  // room for the "0%" label of the diagram above

    setAxisLabels(QString(), tr("Accuracy"));
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    x->setTickLabels(false);
    x->setRange(0, kFullShare);
    y->setRange(0, 1.02);
    y->setTicker(QSharedPointer<PercentTicker>::create());
    QCPAxis* countX = m_countRect->axis(QCPAxis::atBottom);
    QCPAxis* countY = m_countRect->axis(QCPAxis::atLeft);
    countX->setRange(0, kFullShare);
    countX->setLabel(tr("Confidence"));
    countX->setTicker(QSharedPointer<PercentTicker>::create());
    countY->setLabel(tr("Forecasts"));

    m_diagonal = plot->addGraph(x, y);
    m_diagonal->setPen(QPen(referenceColor(), 1.2, Qt::DashLine));
    m_diagonal->setName(tr("Perfect calibration"));
    m_diagonal->setData(QVector<double>{0, 1}, QVector<double>{0, 1}, true);

    m_accuracy = new QCPBars(x, y);
    m_accuracy->setName(tr("Accuracy"));
    m_accuracy->setPen(QPen(forecastColor().darker(120), 1));
    m_accuracy->setBrush(forecastColor());
    m_accuracy->setWidthType(QCPBars::wtPlotCoords);

    m_gap = new QCPBars(x, y);
    m_gap->setName(tr("Gap (over-confidence)"));
    m_gap->setPen(QPen(QColor(0xc0, 0x30, 0x30), 1));
    m_gap->setBrush(QBrush(QColor(0xd0, 0x40, 0x40, 150), Qt::BDiagPattern));
    m_gap->setWidthType(QCPBars::wtPlotCoords);
    m_gap->moveAbove(m_accuracy);

    m_confidence = plot->addGraph(x, y);
    m_confidence->setName(tr("Mean confidence"));
    m_confidence->setLineStyle(QCPGraph::lsNone);
    m_confidence->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, measuredColor().darker(115), measuredColor(), 8));

    m_counts = new QCPBars(countX, countY);
    m_counts->setName(tr("Forecasts"));
    m_counts->removeFromLegend();
    m_counts->setPen(Qt::NoPen);
    m_counts->setBrush(mutedColor());
    m_counts->setWidthType(QCPBars::wtPlotCoords);

    showLegend(Qt::AlignTop | Qt::AlignLeft);
    setBuckets({}, 0);
}

ReliabilityPlot::~ReliabilityPlot() = default;

void ReliabilityPlot::setBuckets(const std::vector<ReliabilityBucket>& buckets, double ece) {
    QVector<double> centres, accuracy, confidence, gap, countCentres, counts;
    m_forecastCount = 0;
    double width = 0.1;
    int64_t maxCount = 0;
    for (const ReliabilityBucket& b : buckets) {
        const double centre = (b.lower + b.upper) / 2;
        width = b.upper - b.lower;
        countCentres.append(centre);
        counts.append(static_cast<double>(b.count));
        maxCount = std::max(maxCount, b.count);
        m_forecastCount += b.count;
        if (b.count == 0)
            continue;  // an empty bucket has no accuracy, not an accuracy of 0
        centres.append(centre);
        accuracy.append(b.accuracy);
        confidence.append(b.mean_confidence);
        gap.append(std::max(0.0, b.mean_confidence - b.accuracy));
    }
    m_accuracy->setWidth(width * 0.86);
    m_counts->setWidth(width * 0.86);
    m_gap->setWidth(width * 0.86);
    m_accuracy->setData(centres, accuracy, true);
    m_gap->setData(centres, gap, true);
    m_confidence->setData(centres, confidence, true);
    m_counts->setData(countCentres, counts, true);
    // Head room over the tallest count bar for its label, and one round tick under it: the labels on the bars
    // carry the numbers, the axis only the scale.
    QCPAxis* countAxis = m_countRect->axis(QCPAxis::atLeft);
    countAxis->setRange(0, std::max<double>(1, maxCount) * 1.35);
    auto countTicks = QSharedPointer<QCPAxisTickerText>::create();
    countTicks->addTick(0, QStringLiteral("0"));
    if (maxCount > 0) {
        const double magnitude = std::pow(10.0, std::floor(std::log10(static_cast<double>(maxCount))));
        const double round = std::floor(maxCount / magnitude) * magnitude;
        countTicks->addTick(round, formatCount(static_cast<int64_t>(round), locale()));
    }
    countAxis->setTicker(countTicks);

    for (QCPItemText* label : m_countLabels)
        customPlot()->removeItem(label);
    m_countLabels.clear();
    const QLocale locale = this->locale();
    QFont labelFont = font();
    labelFont.setPointSizeF(labelFont.pointSizeF() - 1.5);
    for (qsizetype i = 0; i < countCentres.size(); ++i) {
        if (counts[i] == 0)
            continue;
        auto* label = new QCPItemText(customPlot());
        label->setClipAxisRect(m_countRect);
        label->position->setAxes(m_countRect->axis(QCPAxis::atBottom), m_countRect->axis(QCPAxis::atLeft));
        label->position->setCoords(countCentres[i], counts[i]);
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        label->setFont(labelFont);
        label->setColor(QColor(0x50, 0x50, 0x50));
        label->setText(formatCount(static_cast<int64_t>(counts[i]), locale));
        m_countLabels.push_back(label);
    }

    const bool hasData = m_forecastCount > 0;
    setTitleText(hasData ? tr("Reliability (ECE = %1)").arg(locale.toString(ece, 'f', 3)) : tr("Reliability"));
    setHasData(hasData);
    replot();
}

void ReliabilityPlot::setMetrics(const ForecastMetrics& metrics) {
    setBuckets(metrics.reliability, metrics.ece);
    if (m_forecastCount == 0)
        return;
    const QLocale locale = this->locale();
    setTitleText(tr("Reliability (ECE = %1; accuracy %2, majority bin %3)")
                     .arg(locale.toString(metrics.ece, 'f', 3), locale.toString(metrics.accuracy, 'f', 2),
                          locale.toString(metrics.majority_accuracy, 'f', 2)));
    replot();
}

}  // namespace kerncast
