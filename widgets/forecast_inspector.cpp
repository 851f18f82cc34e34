#include "widgets/forecast_inspector.h"

#include "widgets/engine_text.h"
#include "widgets/measurement_panel.h"

#include "core/error.h"
#include "engine/search/llm_mutators.h"
#include "widgets/population_model.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kerncast {

namespace {

constexpr double kMargin = 6;
constexpr double kLabelHeight = 16;  // bin numbers below, percentages above

QString percent(double p) { return QLocale().toString(p * 100, 'f', 0) + QLatin1Char('%'); }

// Scrolls a page of wrapped labels up and down only. QScrollArea sizes such a page for the viewport's width before
// it knows whether a vertical scroll bar will take part of it, and a label that wraps onto one more line in the
// narrower page is then cut off; this one sizes the page for the width it will really have. `flexible` is a widget
// of the page that ignores its size hint (the layout's height for width counts it as nothing) and takes what the
// rest leaves, down to its minimum height: the page scrolls only once it is that small.
class VerticalScrollArea : public QScrollArea {
public:
    VerticalScrollArea(QWidget* page, QWidget* flexible, QWidget* parent) : QScrollArea(parent), m_flexible(flexible) {
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
        setWidgetResizable(false);
        setWidget(page);
        page->installEventFilter(this);
    }

    QSize minimumSizeHint() const override { return {widget()->minimumSizeHint().width(), 60}; }

protected:
    void resizeEvent(QResizeEvent* event) override {
        QScrollArea::resizeEvent(event);
        fitPage();
    }
    bool eventFilter(QObject* watched, QEvent* event) override {
        // A value that changes (a longer label) may need another line: fit again once its layout has been updated.
        if (watched == widget() && event->type() == QEvent::LayoutRequest)
            QMetaObject::invokeMethod(
                this, [this] { fitPage(); }, Qt::QueuedConnection);
        return QScrollArea::eventFilter(watched, event);
    }

private:
    int neededHeight(int width) const {
        const int rest = widget()->heightForWidth(width);
        return (rest >= 0 ? rest : widget()->sizeHint().height()) + m_flexible->minimumHeight();
    }
    void fitPage() {
        const int height = contentsRect().height();
        int width = contentsRect().width();
        if (neededHeight(width) > height)
            width -= verticalScrollBar()->sizeHint().width();
        widget()->resize(width, std::max(neededHeight(width), height));
    }

    QWidget* m_flexible;
};

}  // namespace

// --- BinDistributionWidget -------------------------------------------------------------------------------------

BinDistributionWidget::BinDistributionWidget(QWidget* parent) : QWidget(parent) {
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void BinDistributionWidget::setDistribution(const QList<double>& probabilities, int measuredBin,
                                            const QStringList& schemeNames) {
    m_probabilities = probabilities;
    m_names = schemeNames;
    m_measuredBin = measuredBin >= 1 && measuredBin <= probabilities.size() ? measuredBin : 0;
    update();
}

void BinDistributionWidget::clear() { setDistribution({}, 0, {}); }

int BinDistributionWidget::predictedBin() const {
    if (m_probabilities.isEmpty())
        return 0;
    return static_cast<int>(std::max_element(m_probabilities.begin(), m_probabilities.end()) -
                            m_probabilities.begin()) +
           1;
}

QRectF BinDistributionWidget::plotArea() const {
    return QRectF(kMargin, kMargin + kLabelHeight, width() - 2 * kMargin, height() - 2 * kMargin - 2 * kLabelHeight);
}

QRectF BinDistributionWidget::columnRect(int bin) const {
    const int n = static_cast<int>(m_probabilities.size());
    if (bin < 1 || bin > n)
        return {};
    const QRectF area = plotArea();
    const double w = area.width() / n;
    return QRectF(area.left() + (bin - 1) * w, area.top(), w, area.height());
}

QRectF BinDistributionWidget::barRect(int bin) const {
    const QRectF column = columnRect(bin);
    if (column.isNull())
        return {};
    // Scaled to the tallest bar, so that a flat distribution still shows its shape; the labels give the values.
    const double top = *std::max_element(m_probabilities.begin(), m_probabilities.end());
    const double h = top > 0 ? column.height() * m_probabilities[bin - 1] / top : 0;
    const double inset = column.width() * 0.15;
    return QRectF(column.left() + inset, column.bottom() - h, column.width() - 2 * inset, h);
}

int BinDistributionWidget::binAt(const QPointF& point) const {
    for (int bin = 1; bin <= m_probabilities.size(); ++bin) {
        QRectF column = columnRect(bin);
        column.adjust(0, -kLabelHeight, 0, kLabelHeight);
        if (column.contains(point))
            return bin;
    }
    return 0;
}

QSize BinDistributionWidget::sizeHint() const { return {320, 160}; }

QSize BinDistributionWidget::minimumSizeHint() const { return {160, 90}; }

QColor BinDistributionWidget::barColor() { return QColor(0x8f, 0xb3, 0xe8); }

QColor BinDistributionWidget::predictedBarColor() { return QColor(0x1f, 0x5f, 0xbf); }

QColor BinDistributionWidget::measuredColumnColor() { return QColor(0xff, 0xe9, 0xa8); }

void BinDistributionWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_probabilities.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No forecast"));
        return;
    }
    const QRectF area = plotArea();
    const int predicted = predictedBin();
    if (m_measuredBin > 0) {
        const QRectF column = columnRect(m_measuredBin);
        p.fillRect(column, measuredColumnColor());
        // A downward triangle over the column: the measurement landed here.
        QPainterPath marker;
        const double cx = column.center().x();
        marker.moveTo(cx - 5, area.top() - kLabelHeight);
        marker.lineTo(cx + 5, area.top() - kLabelHeight);
        marker.lineTo(cx, area.top() - kLabelHeight + 7);
        marker.closeSubpath();
        p.setRenderHint(QPainter::Antialiasing, true);
        p.fillPath(marker, QColor(0xc7, 0x7c, 0x00));
        p.setRenderHint(QPainter::Antialiasing, false);
    }
    const QColor text = palette().color(QPalette::Text);
    for (int bin = 1; bin <= m_probabilities.size(); ++bin) {
        const QRectF bar = barRect(bin);
        p.fillRect(bar, bin == predicted ? predictedBarColor() : barColor());
        const QRectF column = columnRect(bin);
        p.setPen(text);
        p.drawText(QRectF(column.left(), area.bottom(), column.width(), kLabelHeight), Qt::AlignCenter,
                   QString::number(bin));
        if (m_probabilities[bin - 1] >= 0.005 && bin != m_measuredBin)
            p.drawText(QRectF(column.left(), bar.top() - kLabelHeight, column.width(), kLabelHeight),
                       Qt::AlignHCenter | Qt::AlignBottom, percent(m_probabilities[bin - 1]));
    }
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(area.bottomLeft(), area.bottomRight());
}

bool BinDistributionWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int bin = binAt(help->pos());
        if (bin == 0) {
            QToolTip::hideText();
            event->ignore();
            return true;
        }
        QString tip = tr("Bin %1: %2")
                          .arg(bin <= m_names.size() ? m_names[bin - 1] : QString::number(bin))
                          .arg(percent(m_probabilities[bin - 1]));
        if (bin == m_measuredBin)
            tip += QLatin1Char('\n') + tr("The measured speedup is in this bin");
        QToolTip::showText(help->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(event);
}

// --- ForecastInspector -----------------------------------------------------------------------------------------

ForecastInspector::ForecastInspector(QWidget* parent) : QWidget(parent) {
    auto value = [this](const char* name) {
        auto* label = new QLabel(this);
        label->setObjectName(QLatin1String(name));
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        // Values wrap: a narrow dock (1280×720, German) shows them whole on two lines instead of cutting them.
        label->setWordWrap(true);
        return label;
    };
    m_title = value("titleLabel");
    m_title->setWordWrap(true);
    m_status = value("statusLabel");
    m_status->setWordWrap(true);
    m_distribution = new BinDistributionWidget(this);
    m_predicted = value("predictedBinValue");
    m_maxProbability = value("maxProbabilityValue");
    m_entropyConfidence = value("entropyConfidenceValue");
    m_top2Margin = value("top2MarginValue");
    m_expectedSpeedup = value("expectedSpeedupValue");
    m_measured = value("measuredValue");
    m_measured->setWordWrap(true);

    // The forecast page: the distribution and its scores.
    auto* forecastPage = new QWidget(this);

    // A grid, not a form layout: QFormLayout underestimates the height of values that wrap, and they were cut off.
    auto* scores = new QGridLayout;
    scores->setContentsMargins(0, 0, 0, 0);
    scores->setColumnStretch(1, 1);
    const std::pair<QString, QLabel*> rows[] = {
        {tr("Predicted bin:"), m_predicted},          {tr("Max probability:"), m_maxProbability},
        {tr("1 − H/log 8:"), m_entropyConfidence},    {tr("Top-2 margin:"), m_top2Margin},
        {tr("Expected speedup:"), m_expectedSpeedup}, {tr("Measured:"), m_measured}};
    for (const auto& [name, value] : rows) {
        const int row = scores->rowCount();
        auto* label = new QLabel(name, forecastPage);
        label->setBuddy(value);
        scores->addWidget(label, row, 0, Qt::AlignLeft | Qt::AlignTop);
        scores->addWidget(value, row, 1, Qt::AlignTop);
    }
    // The bars take what the scores leave, down to a readable minimum: the scores scroll only on a very low dock.
    m_distribution->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);
    m_distribution->setMinimumHeight(m_distribution->minimumSizeHint().height());
    auto* forecastLayout = new QVBoxLayout(forecastPage);
    forecastLayout->setContentsMargins(4, 4, 4, 4);
    forecastLayout->addWidget(m_distribution, 1);
    forecastLayout->addLayout(scores);
    auto* forecastScroll = new VerticalScrollArea(forecastPage, m_distribution, this);
    forecastScroll->setObjectName(QStringLiteral("forecastScroll"));

    m_reasoning = new QPlainTextEdit(this);
    m_reasoning->setObjectName(QStringLiteral("reasoningText"));
    m_reasoning->setReadOnly(true);
    m_reasoning->setPlaceholderText(tr("The surrogate gave no reasoning for this forecast."));
    m_prompt = new QPlainTextEdit(this);
    m_prompt->setObjectName(QStringLiteral("promptText"));
    m_prompt->setReadOnly(true);
    m_prompt->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_prompt->setPlaceholderText(tr("The prompt is not available for this forecast."));
    m_calls = new QPlainTextEdit(this);
    m_calls->setObjectName(QStringLiteral("llmCallsText"));
    m_calls->setReadOnly(true);
    m_calls->setPlaceholderText(tr("No language model was asked about this candidate."));
    m_measurement = new MeasurementPanel(this);
    // The forecast and the measurement are what a person compares, so they are the first two tabs: in view on
    // the narrowest dock, one click apart, with nothing to scroll to first (the tab bar is at the top).
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("detailsTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(forecastScroll, tr("Forecast"));
    m_tabs->addTab(m_measurement, tr("Measurement"));
    m_tabs->addTab(m_reasoning, tr("Reasoning"));
    m_tabs->addTab(m_prompt, tr("Prompt"));
    m_tabs->addTab(m_calls, tr("Model calls"));

    m_measureButton = new QPushButton(tr("Measure on the device"), this);
    m_measureButton->setObjectName(QStringLiteral("measureButton"));
    connect(m_measureButton, &QPushButton::clicked, this, [this] {
        if (m_candidateId != 0)
            Q_EMIT forceMeasureRequested(static_cast<qint64>(m_candidateId));
    });

    // The gating decision and the button that overrides it side by side, above the tabs.
    auto* statusRow = new QHBoxLayout;
    statusRow->addWidget(m_status, 1);
    statusRow->addWidget(m_measureButton, 0, Qt::AlignTop);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_title);
    layout->addLayout(statusRow);
    layout->addWidget(m_tabs, 1);
    clear();
}

void ForecastInspector::setScheme(const BinScheme& scheme) { m_scheme = scheme; }

void ForecastInspector::clear() {
    m_candidateId = 0;
    m_title->setText(tr("No candidate selected"));
    for (QLabel* label :
         {m_status, m_predicted, m_maxProbability, m_entropyConfidence, m_top2Margin, m_expectedSpeedup, m_measured})
        label->clear();
    m_distribution->clear();
    m_reasoning->clear();
    m_prompt->clear();
    m_calls->clear();
    m_measurement->clear();
    m_measureButton->setEnabled(false);
    m_measureButton->setToolTip({});
}

void ForecastInspector::setLlmCalls(const std::vector<LlmCall>& calls) {
    const QLocale locale;
    QString text;
    const LlmCall* lastForecast = nullptr;
    for (const LlmCall& c : calls) {
        if (c.kind == "forecast")
            lastForecast = &c;
        text +=
            tr("── %1 · %2 · %3 · %4 in / %5 out tokens · $%6 · %7 s\n")
                .arg(QString::fromStdString(c.kind), QString::fromStdString(c.outcome), QString::fromStdString(c.model))
                .arg(locale.toString(static_cast<qlonglong>(c.tokens_in)))
                .arg(locale.toString(static_cast<qlonglong>(c.tokens_out)))
                .arg(locale.toString(c.cost_usd, 'f', 4))
                .arg(locale.toString(c.latency_ms / 1000.0, 'f', 1));
        // What a mutation's prompt was made of (about 4 characters a token): what --max-prompt-tokens bounds.
        if (c.kind != "forecast")
            if (const auto parts = mutation_prompt_sections(c.prompt); parts.size() == 5) {
                const auto tokens = [&](size_t chars) {
                    return locale.toString(static_cast<qlonglong>(chars / kCharsPerToken));
                };
                text += tr("Prompt: about %1 tokens; instructions %2, problem %3, reference %4, parent %5, "
                           "inspirations %6\n")
                            .arg(tokens(c.prompt.size()), tokens(parts[0].second), tokens(parts[1].second),
                                 tokens(parts[2].second), tokens(parts[3].second), tokens(parts[4].second));
            }
        if (!c.error.empty())
            text += tr("Error: %1\n").arg(QString::fromStdString(c.error));
        if (!c.reasoning.empty())
            text += tr("Reasoning:\n%1\n").arg(QString::fromStdString(c.reasoning));
        text += tr("Reply:\n%1\n\n").arg(QString::fromStdString(c.reply));
    }
    m_calls->setPlainText(text);
    if (!lastForecast)
        return;
    if (m_prompt->toPlainText().isEmpty())
        m_prompt->setPlainText(QString::fromStdString(lastForecast->prompt));
    if (m_reasoning->toPlainText().isEmpty())
        m_reasoning->setPlainText(QString::fromStdString(lastForecast->reasoning));
    if (lastForecast->outcome == "deferred")
        m_predicted->setText(tr("deferred to a measurement (the model abstained)"));
}

void ForecastInspector::setCandidate(const CandidateRow& row, const std::optional<Forecast>& forecast,
                                     const QString& prompt) {
    clear();
    m_candidateId = row.id;
    const QLocale locale;
    QString title = tr("Candidate %1 · %2 · generation %3")
                        .arg(row.id)
                        .arg(PopulationModel::mutatorText(row.mutator))
                        .arg(row.generation);
    if (!row.label.isEmpty())
        title += QLatin1Char('\n') + EngineText::message(row.label);
    m_title->setText(title);
    QString status = PopulationModel::statusText(row.status);
    if (row.decision) {
        status = tr("%1 (gating: %2)").arg(status, PopulationModel::decisionText(*row.decision));
        // Why, with the numbers against tau and pi; a measurement's own reason replaces it.
        if (!row.reason.isEmpty() && !row.isMeasured())
            status += QLatin1Char('\n') + EngineText::message(row.reason);
    }
    m_status->setText(status);

    std::optional<Forecast> f = forecast;
    if (!f && row.hasForecast()) {
        try {
            f = Forecast::fromRaw(row.probabilities);
        } catch (const Error&) {
            f.reset();  // a row without probabilities: nothing to draw
        }
    }

    // The forecast is of S against its anchor; the measured bin is of the same S.
    const std::optional<double> measuredS = f ? (row.measured_speedup && f->anchor_speedup > 0
                                                     ? std::optional<double>(*row.measured_speedup / f->anchor_speedup)
                                                     : std::nullopt)
                                              : row.measuredAgainstAnchor();
    const int measuredBin = measuredS ? m_scheme.binOf(*measuredS) : 0;
    const double measuredShown = measuredS ? *measuredS : row.measured_speedup.value_or(0.0);
    const QString against = anchorText(f ? f->anchor_id : row.anchor_id);
    if (f) {
        QStringList names;
        QList<double> probabilities;
        for (int bin = 1; bin <= kBinCount; ++bin) {
            names << EngineText::binLabel(m_scheme, bin);
            probabilities << f->probabilities[static_cast<size_t>(bin - 1)];
        }
        m_distribution->setDistribution(probabilities, measuredBin, names);
        m_predicted->setText(EngineText::binLabel(m_scheme, f->predicted_bin));
        m_maxProbability->setText(locale.toString(f->maxProbability(), 'f', 2));
        m_entropyConfidence->setText(locale.toString(f->normalizedEntropyConfidence(), 'f', 2));
        m_top2Margin->setText(locale.toString(f->top2Margin(), 'f', 2));
        m_expectedSpeedup->setText(
            tr("%1× %2 (expected bin %3)")
                .arg(locale.toString(std::exp(f->log_mean ? *f->log_mean : f->expectedLogSpeedup(m_scheme)), 'f', 2))
                .arg(against)
                .arg(locale.toString(f->expectedBin(), 'f', 1)));
        m_reasoning->setPlainText(QString::fromStdString(f->reasoning));
    } else {
        m_predicted->setText(tr("no forecast yet"));
    }
    m_prompt->setPlainText(prompt);

    const bool againstParent = (f ? f->anchor_id : row.anchor_id) > 0;
    if (row.measured_speedup && !againstParent) {
        m_measured->setText(tr("%1× %2 — bin %3")
                                .arg(locale.toString(measuredShown, 'f', 2))
                                .arg(against)
                                .arg(EngineText::binLabel(m_scheme, measuredBin)));
    } else if (row.measured_speedup) {
        // Against a parent, the speedup over the reference is what the population and the best are about.
        m_measured->setText(tr("%1× %2 — bin %3; %4× over the reference")
                                .arg(locale.toString(measuredShown, 'f', 2))
                                .arg(against)
                                .arg(EngineText::binLabel(m_scheme, measuredBin))
                                .arg(locale.toString(*row.measured_speedup, 'f', 2)));
    } else if (row.isMeasured()) {
        QString text = PopulationModel::statusText(row.status);
        if (!row.reason.isEmpty())
            text += QStringLiteral(": ") + row.reason;
        m_measured->setText(text);
    } else {
        m_measured->setText(tr("not measured"));
    }

    // Measuring again what is measured, or on its way to the device, would only spend device time.
    const bool onItsWay = row.status == QLatin1String(candidate_status::Queued) ||
                          row.status == QLatin1String(candidate_status::Measuring);
    m_measureButton->setEnabled(row.id != 0 && !row.isMeasured() && !onItsWay);
    if (row.isMeasured())
        m_measureButton->setToolTip(tr("This candidate has been measured already."));
    else if (onItsWay)
        m_measureButton->setToolTip(tr("This candidate is already queued for the device."));
    else
        m_measureButton->setToolTip(tr("Measure this candidate on the device whatever its forecast says."));
}

}  // namespace kerncast
