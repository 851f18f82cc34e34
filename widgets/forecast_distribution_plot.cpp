#include "widgets/forecast_distribution_plot.h"

#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"

#include <QFontMetricsF>

#include <algorithm>

namespace kerncast {

namespace {

constexpr double kBarWidth = 0.72;  // in bins

// Bin labels that fit: name and range while a bin is wide enough for its longest word, the range alone (over two
// lines) when the plot is narrow. Decided at each layout from the plot's current width, so exports of another size
// choose for themselves.
class BinTicker : public QCPAxisTickerText {
public:
    BinTicker(const QCPAxis* axis, QStringList full, QStringList compact)
        : m_axis(axis), m_full(std::move(full)), m_compact(std::move(compact)) {
        const QFontMetricsF metrics(axis->tickLabelFont());
        for (const QString& label : m_full)
            for (const QString& line : label.split(QLatin1Char('\n')))
                m_fullWidth = std::max(m_fullWidth, metrics.horizontalAdvance(line));
        for (int bin = 1; bin <= m_full.size(); ++bin)
            addTick(bin, m_full[bin - 1]);
    }

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        const int bin = qRound(tick);
        if (bin < 1 || bin > m_full.size())
            return {};
        // The value axis and its labels take about 70 pixels of the width.
        const double perBin = (m_axis->parentPlot()->viewport().width() - 70) / (kBinCount + 0.2);
        return (m_fullWidth + 6 <= perBin ? m_full : m_compact)[bin - 1];
    }

private:
    const QCPAxis* m_axis;
    QStringList m_full, m_compact;
    double m_fullWidth = 0;
};

}  // namespace

ForecastDistributionPlot::ForecastDistributionPlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    setAxisLabels(QString(), tr("Probability"));
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    x->setRange(0.4, kBinCount + 0.6);
    x->grid()->setVisible(false);
    QFont tickFont = font();
    tickFont.setPointSizeF(tickFont.pointSizeF() - 1);
    x->setTickLabelFont(tickFont);
    y->setTicker(QSharedPointer<PercentTicker>::create());

    m_others = new QCPBars(x, y);
    m_others->setName(tr("Probability"));
    m_others->setWidth(kBarWidth);
    m_others->setPen(Qt::NoPen);
    m_others->setBrush(mutedColor());

    m_predicted = new QCPBars(x, y);
    m_predicted->setWidth(kBarWidth);
    m_predicted->setPen(Qt::NoPen);
    m_predicted->setBrush(forecastColor());

    // The measured bin: an outline around its bar and a marker above it, in the "measured" colour of every plot.
    m_measuredOutline = new QCPBars(x, y);
    m_measuredOutline->setWidth(kBarWidth + 0.12);
    m_measuredOutline->setPen(QPen(measuredColor(), 2));
    m_measuredOutline->setBrush(Qt::NoBrush);
    m_measuredOutline->removeFromLegend();

    m_measuredMarker = plot->addGraph(x, y);
    m_measuredMarker->setLineStyle(QCPGraph::lsNone);
    m_measuredMarker->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssTriangleInverted, measuredColor().darker(115), measuredColor(), 11));

    showLegend(Qt::AlignTop | Qt::AlignRight);
    update();
}

ForecastDistributionPlot::~ForecastDistributionPlot() = default;

void ForecastDistributionPlot::setForecast(const Forecast& forecast, const BinScheme& scheme) {
    m_scheme = scheme;
    m_probabilities = forecast.probabilities;
    m_predictedBin = forecast.predicted_bin;
    m_hasForecast = true;
    update();
}

void ForecastDistributionPlot::setMeasuredSpeedup(double speedup) {
    m_measuredSpeedup = speedup;
    update();
}

void ForecastDistributionPlot::clearMeasured() {
    m_measuredSpeedup.reset();
    update();
}

void ForecastDistributionPlot::clear() {
    m_hasForecast = false;
    m_predictedBin = 0;
    m_probabilities = {};
    m_measuredSpeedup.reset();
    update();
}

QStringList ForecastDistributionPlot::binLabels() const {
    QStringList labels;
    if (!m_scheme)
        return labels;
    for (int bin = 1; bin <= kBinCount; ++bin) {
        // "significant speedup" is too wide for one bar: one word per line, then the range.
        QString name = QString::fromStdString(m_scheme->name(bin));
        name.replace(QLatin1Char(' '), QLatin1Char('\n'));
        labels.append(name + QLatin1Char('\n') +
                      formatSpeedupRange(m_scheme->lowerEdge(bin), m_scheme->upperEdge(bin), locale()));
    }
    return labels;
}

void ForecastDistributionPlot::update() {
    QVector<double> otherKeys, otherValues, predictedKeys, predictedValues;
    if (m_hasForecast) {
        for (int bin = 1; bin <= kBinCount; ++bin) {
            QVector<double>& keys = bin == m_predictedBin ? predictedKeys : otherKeys;
            QVector<double>& values = bin == m_predictedBin ? predictedValues : otherValues;
            keys.append(bin);
            values.append(m_probabilities[bin - 1]);
        }
    }
    m_others->setData(otherKeys, otherValues, true);
    m_predicted->setData(predictedKeys, predictedValues, true);

    const QLocale locale = this->locale();
    m_measuredBin = m_hasForecast && m_measuredSpeedup ? m_scheme->binOf(*m_measuredSpeedup) : 0;
    if (m_measuredBin > 0) {
        const double p = m_probabilities[m_measuredBin - 1];
        m_measuredOutline->setData(QVector<double>{double(m_measuredBin)}, QVector<double>{p}, true);
        m_measuredMarker->setData(QVector<double>{double(m_measuredBin)}, QVector<double>{p + 0.06}, true);
    } else {
        m_measuredOutline->data()->clear();
        m_measuredMarker->data()->clear();
    }
    if (m_hasForecast && m_measuredSpeedup) {
        m_measuredMarker->setName(m_measuredBin > 0 ? tr("Measured: %1").arg(formatSpeedup(*m_measuredSpeedup, locale))
                                                    : tr("Measured: failed (no speedup)"));
        m_measuredMarker->addToLegend();
    } else {
        m_measuredMarker->removeFromLegend();
    }

    if (m_hasForecast && m_predictedBin >= 1 && m_predictedBin <= kBinCount) {
        m_predicted->setName(
            tr("Predicted: %1 (%2)")
                .arg(QString::fromStdString(m_scheme->name(m_predictedBin)),
                     locale.toString(100 * m_probabilities[m_predictedBin - 1], 'f', 0) + QLatin1Char('%')));
        m_predicted->addToLegend();
    } else {
        m_predicted->removeFromLegend();
    }

    QStringList compact;
    for (int bin = 1; m_scheme && bin <= kBinCount; ++bin)
        compact.append(formatSpeedupRange(m_scheme->lowerEdge(bin), m_scheme->upperEdge(bin), locale)
                           .replace(QStringLiteral("–"), QStringLiteral("–\n"))
                           .replace(QLatin1Char(' '), QLatin1Char('\n')));
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    x->setTicker(QSharedPointer<BinTicker>::create(x, binLabels(), compact));

    // Probabilities share one scale across forecasts (0 to 100%) unless a marker needs head room above a tall bar.
    const double top = m_measuredBin > 0 ? std::max(kFullShare, m_probabilities[m_measuredBin - 1] + 0.1) : kFullShare;
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(0, top);

    setTitleText(m_hasForecast ? tr("Forecast distribution (%1)").arg(QString::fromStdString(m_scheme->id()))
                               : tr("Forecast distribution"));
    m_others->setVisible(m_hasForecast);
    setHasData(m_hasForecast);
    replot();
}

}  // namespace kerncast
