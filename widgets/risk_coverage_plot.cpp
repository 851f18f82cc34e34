#include "widgets/risk_coverage_plot.h"

#include "widgets/plot_tickers.h"
#include "widgets/qcustomplot_include.h"

#include <algorithm>
#include <cmath>

namespace kerncast {

RiskCoveragePlot::RiskCoveragePlot(QWidget* parent) : PlotWidget(parent) {
    QCustomPlot* plot = customPlot();
    setAxisLabels(tr("Coverage (forecasts kept)"), tr("Risk (kept forecasts wrong)"));
    QCPAxis* x = mainAxisRect()->axis(QCPAxis::atBottom);
    QCPAxis* y = mainAxisRect()->axis(QCPAxis::atLeft);
    x->setTicker(QSharedPointer<PercentTicker>::create());
    y->setTicker(QSharedPointer<PercentTicker>::create());
    x->setRange(0, kFullShare);
    y->setRange(0, kFullShare);

    m_fullCoverage = plot->addGraph(x, y);
    m_fullCoverage->setPen(QPen(referenceColor(), 1.2, Qt::DashLine));
    m_fullCoverage->setName(tr("Risk with every forecast kept"));

    m_curve = plot->addGraph(x, y);
    // Between two thresholds the kept set is the one at the right point: its risk holds up to its coverage.
    m_curve->setLineStyle(QCPGraph::lsStepRight);
    m_curve->setPen(QPen(forecastColor(), 2));
    QColor fill = forecastColor();
    fill.setAlpha(45);
    m_curve->setBrush(fill);  // the shaded area is what AURC measures
    m_curve->setName(tr("Risk at coverage"));

    showLegend(Qt::AlignTop | Qt::AlignLeft);
    setCurve({}, 0);
}

RiskCoveragePlot::~RiskCoveragePlot() = default;

void RiskCoveragePlot::setCurve(const std::vector<RiskCoveragePoint>& points, double aurc) {
    std::vector<RiskCoveragePoint> sorted;
    for (const RiskCoveragePoint& p : points)
        if (std::isfinite(p.coverage) && std::isfinite(p.risk))
            sorted.push_back(p);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const RiskCoveragePoint& a, const RiskCoveragePoint& b) { return a.coverage < b.coverage; });

    QVector<double> coverage, risk;
    double maxRisk = 0;
    if (!sorted.empty() && sorted.front().coverage > 0) {
        // The most confident kept set holds from zero coverage: start the step there.
        coverage.append(0);
        risk.append(sorted.front().risk);
    }
    for (const RiskCoveragePoint& p : sorted) {
        coverage.append(p.coverage);
        risk.append(p.risk);
        maxRisk = std::max(maxRisk, p.risk);
    }
    m_curve->setData(coverage, risk, true);

    const bool hasData = !sorted.empty();
    if (hasData) {
        const double fullRisk = sorted.back().risk;
        m_fullCoverage->setData(QVector<double>{0, 1}, QVector<double>{fullRisk, fullRisk}, true);
        m_fullCoverage->addToLegend();
    } else {
        m_fullCoverage->data()->clear();
        m_fullCoverage->removeFromLegend();
    }
    // Risk is a share: show from 0 to a little over the worst point (room for the legend), never past 100%.
    const double top = hasData ? std::min(kFullShare, std::max(0.1, maxRisk * 1.45)) : kFullShare;
    mainAxisRect()->axis(QCPAxis::atLeft)->setRange(0, top);

    const QLocale locale = this->locale();
    setTitleText(hasData ? tr("Risk–coverage (AURC = %1)").arg(locale.toString(aurc, 'f', 3)) : tr("Risk–coverage"));
    setHasData(hasData);
    replot();
}

}  // namespace kerncast
