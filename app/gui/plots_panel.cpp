#include "app/gui/plots_panel.h"

#include "app/gui/run_data.h"
#include "widgets/forecast_scatter_plot.h"
#include "widgets/parameter_plot.h"
#include "widgets/reliability_plot.h"
#include "widgets/risk_coverage_plot.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kerncast {

PlotsPanel::PlotsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_scatter = new ForecastScatterPlot(m_tabs);
    m_reliability = new ReliabilityPlot(m_tabs);
    m_riskCoverage = new RiskCoveragePlot(m_tabs);
    m_progressPlot = new SearchProgressPlot(m_tabs);
    m_tabs->addTab(m_scatter, tr("Forecast vs Measured"));
    m_tabs->addTab(m_reliability, tr("Reliability"));
    m_tabs->addTab(m_riskCoverage, tr("Risk-Coverage"));
    m_tabs->addTab(m_progressPlot, tr("Search Progress"));
    m_parameters = new ParameterPlot(m_tabs);
    m_tabs->addTab(m_parameters, tr("Tunables"));
    // The plots are chosen from a list, not from tabs: five tab names do not fit a dock of 500 pixels (German ones
    // were cut to two letters at 1280×720), a list shows every name whole at any width.
    m_tabs->tabBar()->hide();
    m_chooser = new QComboBox(this);
    m_chooser->setObjectName(QStringLiteral("plotChooser"));
    m_chooser->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    for (int i = 0; i < m_tabs->count(); ++i)
        m_chooser->addItem(m_tabs->tabText(i));
    connect(m_chooser, &QComboBox::currentIndexChanged, m_tabs, &QTabWidget::setCurrentIndex);
    connect(m_tabs, &QTabWidget::currentChanged, m_chooser, &QComboBox::setCurrentIndex);
    auto* exportButton = new QToolButton(m_tabs);
    exportButton->setText(tr("Export…"));
    exportButton->setToolTip(tr("Save the plot shown as PNG or PDF"));
    exportButton->setAutoRaise(true);
    connect(exportButton, &QToolButton::clicked, this, [this, exportButton] {
        auto* plot = qobject_cast<PlotWidget*>(m_tabs->currentWidget());
        if (!plot)
            return;
        QMenu* menu = plot->createContextMenu();
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(exportButton->mapToGlobal(QPoint(0, exportButton->height())));
    });
    exportButton->setObjectName(QStringLiteral("exportPlotButton"));
    m_metricsLabel = new QLabel(this);
    m_metricsLabel->setObjectName(QStringLiteral("metricsLabel"));
    m_metricsLabel->setWordWrap(true);
    m_metricsLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* above = new QHBoxLayout;
    above->addWidget(m_chooser);
    above->addStretch(1);
    above->addWidget(exportButton);
    layout->addLayout(above);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_metricsLabel);
    connect(m_scatter, &ForecastScatterPlot::candidateClicked, this, &PlotsPanel::candidateClicked);
}

void PlotsPanel::clear() {
    m_metricsJob.discard();
    m_scatter->clear();
    m_reliability->clear();
    m_riskCoverage->clear();
    m_progressPlot->clear();
    m_parameters->clear();
    m_metrics = ForecastMetrics{};
    m_auditedMetrics = ForecastMetrics{};
    m_metricsLabel->setText(tr("No run shown. Start a search (F5), or open a run or evaluate a pair set from the "
                               "File menu."));
}

void PlotsPanel::refresh(const std::vector<CandidateRow>& rows, const BinScheme& scheme, const std::string& pack,
                         const std::vector<ProgressPoint>& progress, int64_t measured) {
    m_scatter->setPoints(forecastPoints(rows));
    m_progressPlot->setProgress(progress, measured);
    m_parameters->setRows(rows);
    std::vector<ScoredForecast> scored = scoredForecasts(rows, pack);
    std::vector<ScoredForecast> audited = auditedForecasts(rows, pack);
    // A run whose gate trusted nothing (measure-all, a pair-set evaluation) measured every forecast: no sample of
    // it is the gate's choice, and no audit line is shown.
    const bool gated = std::any_of(rows.begin(), rows.end(), [](const CandidateRow& r) {
        return r.decision == GatingDecision::Trust || r.decision == GatingDecision::Discard ||
               r.decision == GatingDecision::Audit;
    });
    const auto compute = [scheme](const std::vector<ScoredForecast>& s) {
        try {
            return compute_metrics(s, scheme);
        } catch (const std::exception&) {
            return ForecastMetrics{};
        }
    };
    const bool anyRows = !rows.empty();
    if (static_cast<int>(rows.size()) <= kBackgroundMetricsRows) {
        m_metricsJob.discard();
        showMetrics({compute(scored), compute(audited), gated}, anyRows);
        return;
    }
    // Calibration over tens of thousands of forecasts takes a while: worked out off the GUI thread, shown unless a
    // newer refresh has started meanwhile.
    m_metricsJob.start(
        [compute, gated, scored = std::move(scored), audited = std::move(audited)] {
        return Metrics{compute(scored), compute(audited), gated};
        },
        [this, anyRows](const Metrics& metrics) { showMetrics(metrics, anyRows); });
}

void PlotsPanel::setSelected(qint64 candidateId) { m_scatter->setSelected(candidateId); }

void PlotsPanel::showReliability() { m_tabs->setCurrentWidget(m_reliability); }

QString PlotsPanel::auditedText(const QLocale& locale) const {
    const ForecastMetrics& m = m_auditedMetrics;
    if (m.n == 0)
        return tr("Audited (a random share of the trusted): no audited candidates yet.");
    return tr("%n audited forecast(s) (a random share of the trusted): accuracy %1 (majority bin %2), ECE %3, "
              "AURC %4; Brier skill %5, CRPS skill %6",
              nullptr, static_cast<int>(m.n))
        .arg(locale.toString(m.accuracy, 'f', 3), locale.toString(m.majority_accuracy, 'f', 3),
             locale.toString(m.ece, 'f', 3), locale.toString(m.aurc, 'f', 3), skillText(m.brier_skill, locale),
             skillText(m.crps_skill, locale));
}

void PlotsPanel::showMetrics(const Metrics& metrics, bool anyRows) {
    m_metrics = metrics.all;
    m_auditedMetrics = metrics.audited;
    m_reliability->setMetrics(m_metrics);
    m_riskCoverage->setMetrics(m_metrics);
    const QLocale locale;
    if (m_metrics.n > 0)
        m_metricsLabel->setText(
            tr("%n measured forecast(s): accuracy %1 (majority bin %2), off by one %3, ECE %4, "
               "AURC %5, Kendall τ-b %6; Brier %7 (climatology %8, skill %9), CRPS %10 "
               "(climatology %11, skill %12)",
               nullptr, static_cast<int>(m_metrics.n))
                .arg(locale.toString(m_metrics.accuracy, 'f', 3), locale.toString(m_metrics.majority_accuracy, 'f', 3),
                     locale.toString(m_metrics.off_by_one, 'f', 3), locale.toString(m_metrics.ece, 'f', 3),
                     locale.toString(m_metrics.aurc, 'f', 3), locale.toString(m_metrics.kendall_tau_b, 'f', 3),
                     locale.toString(m_metrics.brier, 'f', 3), locale.toString(m_metrics.brier_climatology, 'f', 3),
                     skillText(m_metrics.brier_skill, locale))
                .arg(locale.toString(m_metrics.crps, 'f', 4), locale.toString(m_metrics.crps_climatology, 'f', 4),
                     skillText(m_metrics.crps_skill, locale)) +
            (metrics.gated ? QLatin1Char('\n') + auditedText(locale) : QString()));
    else
        m_metricsLabel->setText(anyRows ? tr("No measured candidate with a forecast yet.") : tr("No candidates yet."));
    Q_EMIT metricsShown(m_metrics);
}

}  // namespace kerncast
