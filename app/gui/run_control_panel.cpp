#include "app/gui/run_control_panel.h"

#include "app/gui/run_data.h"
#include "core/metrics.h"
#include "engine/llm/llm_client.h"
#include "widgets/device_list_model.h"
#include "widgets/pool_settings_widget.h"
#include "widgets/problem_list_model.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace kerncast {

namespace {

QSlider* makeSlider(int maximum, QWidget* parent) {
    auto* s = new QSlider(Qt::Horizontal, parent);
    s->setRange(0, maximum);
    s->setSingleStep(1);
    s->setPageStep(5);
    return s;
}

double sliderValue(const QSlider* s) { return s->value() / 100.0; }

QString formatElapsed(double seconds) {
    const auto total = static_cast<qint64>(seconds + 0.5);
    if (total >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(total / 3600)
            .arg(total / 60 % 60, 2, 10, QLatin1Char('0'))
            .arg(total % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
}

}  // namespace

RunControlPanel::RunControlPanel(ProblemListModel* problems, DeviceListModel* devices, QWidget* parent)
    : QWidget(parent) {
    // Buttons and progress stay at the top, always in view; the settings under them scroll on a small screen.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    auto* top = new QVBoxLayout;
    top->setContentsMargins(6, 6, 6, 6);
    top->setSpacing(6);
    outer->addLayout(top);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("runSettingsScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    auto* settings = new QWidget(scroll);
    auto* layout = new QVBoxLayout(settings);
    // Narrow side margins: on a 1280×720 screen the dock is about 330 pixels wide inside its scroll bar.
    layout->setContentsMargins(4, 0, 4, 6);
    layout->setSpacing(6);
    scroll->setWidget(settings);
    outer->addWidget(scroll, 1);

    // What to search.
    auto* what = new QGroupBox(tr("Search"), settings);
    auto* whatForm = new QFormLayout(what);
    whatForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A row too wide for a narrow dock (the prices, the mutators in German) puts its label above its fields.
    whatForm->setRowWrapPolicy(QFormLayout::WrapLongRows);
    const QMargins boxMargins = whatForm->contentsMargins();
    whatForm->setContentsMargins(6, boxMargins.top(), 6, boxMargins.bottom());
    m_problem = new QComboBox(what);
    m_problem->setObjectName(QStringLiteral("runProblem"));
    m_problem->setModel(problems);
    m_problem->setModelColumn(ProblemListModel::NameColumn);
    m_device = new QComboBox(what);
    m_device->setObjectName(QStringLiteral("runDevice"));
    m_device->setModel(devices);
    m_device->setModelColumn(DeviceListModel::IdColumn);
    m_surrogate = new QComboBox(what);
    m_surrogate->setObjectName(QStringLiteral("runSurrogate"));
    m_surrogate->addItem(tr("Local (learned from recordings)"), QStringLiteral("local"));
    m_surrogate->addItem(tr("LLM endpoint"), QStringLiteral("llm"));
    m_surrogate->addItem(tr("None (measure everything)"), QStringLiteral("none"));
    // Combo boxes as wide as the dock, not as their longest entry.
    for (QComboBox* combo : {m_problem, m_device, m_surrogate}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
    }
    m_endpoint = new QLineEdit(what);
    m_endpoint->setObjectName(QStringLiteral("runEndpoint"));
    m_endpoint->setPlaceholderText(tr("http://localhost:8000/v1"));
    m_endpoint->setClearButtonEnabled(true);
    m_model = new QLineEdit(what);
    m_model->setObjectName(QStringLiteral("runModel"));
    m_model->setPlaceholderText(tr("model name at the endpoint"));
    m_model->setClearButtonEnabled(true);
    m_profile = new QComboBox(what);
    m_profile->setObjectName(QStringLiteral("runLlmProfile"));
    m_profile->addItem(tr("Auto (adapts to the endpoint)"), QStringLiteral("auto"));
    m_profile->addItem(tr("OpenAI"), QStringLiteral("openai"));
    m_profile->addItem(tr("vLLM"), QStringLiteral("vllm"));
    m_profile->addItem(tr("Ollama"), QStringLiteral("ollama"));
    m_profile->addItem(tr("llama.cpp server"), QStringLiteral("llamacpp"));
    m_profile->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_profile->setMinimumContentsLength(10);
    m_profile->setToolTip(tr("How requests are shaped: tool calling, JSON in the answer, max_tokens or "
                             "max_completion_tokens, temperature. Auto switches once when the endpoint refuses one."));
    auto* prices = new QWidget(what);
    auto* pricesLayout = new QHBoxLayout(prices);
    pricesLayout->setContentsMargins(0, 0, 0, 0);
    m_priceIn = new QDoubleSpinBox(prices);
    m_priceOut = new QDoubleSpinBox(prices);
    for (QDoubleSpinBox* price : {m_priceIn, m_priceOut}) {
        price->setRange(0, 1000);
        price->setDecimals(3);
        price->setPrefix(QStringLiteral("$"));
        // The unit in the box ("$0.150/M"): a label after the boxes would not fit the narrow dock of a small screen.
        price->setSuffix(tr("/M"));
        // As wide as a usual price, not as the largest one ($1000.000): the two share a narrow row.
        price->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        price->setMinimumWidth(
            price->fontMetrics().horizontalAdvance(price->prefix() + QStringLiteral("00.000") + price->suffix()) + 32);
        pricesLayout->addWidget(price, 1);
    }
    m_priceIn->setObjectName(QStringLiteral("runPriceIn"));
    m_priceOut->setObjectName(QStringLiteral("runPriceOut"));
    m_priceIn->setToolTip(tr("USD per million prompt tokens: the run's cost and its cost budget count with it."));
    m_priceOut->setToolTip(tr("USD per million completion tokens (reasoning included)."));
    pricesLayout->insertWidget(0, new QLabel(tr("in"), prices));
    pricesLayout->insertWidget(2, new QLabel(tr("out"), prices));
    m_keyNote = new QLabel(tr("The API key is read from $KERNCAST_API_KEY, $OPENAI_API_KEY or "
                              "~/.config/kerncast/llm.json; it is never stored by the workbench."),
                           what);
    loadLlmSettingsFile();
    m_keyNote->setWordWrap(true);
    m_keyNote->setStyleSheet(QStringLiteral("color: palette(mid);"));
    auto* mutators = new QWidget(what);
    // Two to a row: three side by side would widen the narrow dock of a small screen.
    auto* mutatorsLayout = new QGridLayout(mutators);
    mutatorsLayout->setContentsMargins(0, 0, 0, 0);
    m_parametric = new QCheckBox(tr("Parametric"), mutators);
    m_parametric->setChecked(true);
    m_llmRewrite = new QCheckBox(tr("LLM rewrite"), mutators);
    m_llmDiff = new QCheckBox(tr("LLM diff"), mutators);
    mutatorsLayout->addWidget(m_parametric, 0, 0);
    mutatorsLayout->addWidget(m_llmRewrite, 0, 1);
    mutatorsLayout->addWidget(m_llmDiff, 1, 0);
    mutatorsLayout->setColumnStretch(2, 1);
    whatForm->addRow(tr("&Problem:"), m_problem);
    whatForm->addRow(tr("&Device:"), m_device);
    m_pool = new PoolSettingsWidget(what);
    whatForm->addRow(m_pool);
    whatForm->addRow(tr("S&urrogate:"), m_surrogate);
    whatForm->addRow(tr("&Endpoint:"), m_endpoint);
    whatForm->addRow(tr("&Model:"), m_model);
    whatForm->addRow(tr("LLM pro&file:"), m_profile);
    whatForm->addRow(tr("Prices:"), prices);
    whatForm->addRow(m_keyNote);
    whatForm->addRow(tr("Mutators:"), mutators);
    layout->addWidget(what);

    // How to gate: live while a search runs.
    auto* gatingBox = new QGroupBox(tr("Gating"), settings);
    auto* gatingGrid = new QGridLayout(gatingBox);
    gatingGrid->setColumnStretch(1, 1);
    m_gatingKind = new QComboBox(gatingBox);
    m_gatingKind->setObjectName(QStringLiteral("runGating"));
    m_gatingKind->addItem(tr("Selective"), QStringLiteral("selective"));
    m_gatingKind->addItem(tr("Top-k per parent"), QStringLiteral("top-k"));
    m_gatingKind->addItem(tr("Measure all"), QStringLiteral("measure-all"));
    m_gatingKind->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_gatingKind->setMinimumContentsLength(10);
    m_tau = makeSlider(100, gatingBox);
    m_tau->setObjectName(QStringLiteral("tauSlider"));
    m_tau->setToolTip(tr("τ: a candidate is measured when the forecast's confidence (largest bin probability) is "
                         "below τ."));
    m_pi = makeSlider(100, gatingBox);
    m_pi->setObjectName(QStringLiteral("piSlider"));
    m_pi->setToolTip(tr("π: a candidate is measured when the forecast gives at least π to beating the best "
                        "speedup so far."));
    m_epsilon = makeSlider(50, gatingBox);
    m_epsilon->setObjectName(QStringLiteral("epsilonSlider"));
    m_epsilon->setToolTip(tr("ε: the share of trusted candidates measured anyway, so that calibration is tracked "
                             "without bias."));
    m_tauValue = new QLabel(gatingBox);
    m_piValue = new QLabel(gatingBox);
    m_epsilonValue = new QLabel(gatingBox);
    for (QLabel* l : {m_tauValue, m_piValue, m_epsilonValue}) {
        l->setMinimumWidth(l->fontMetrics().horizontalAdvance(QStringLiteral("0.00")) + 4);
        l->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    m_topK = new QSpinBox(gatingBox);
    m_topK->setObjectName(QStringLiteral("topKSpin"));
    m_topK->setRange(1, 64);
    m_topK->setToolTip(tr("Top-k: children measured per parent, by expected speedup bin."));
    auto* gatingLabel = new QLabel(tr("P&olicy:"), gatingBox);
    gatingLabel->setBuddy(m_gatingKind);
    gatingGrid->addWidget(gatingLabel, 0, 0);
    gatingGrid->addWidget(m_gatingKind, 0, 1, 1, 2);
    gatingGrid->addWidget(new QLabel(tr("τ confidence:"), gatingBox), 1, 0);
    gatingGrid->addWidget(m_tau, 1, 1);
    gatingGrid->addWidget(m_tauValue, 1, 2);
    gatingGrid->addWidget(new QLabel(tr("π P(beats best):"), gatingBox), 2, 0);
    gatingGrid->addWidget(m_pi, 2, 1);
    gatingGrid->addWidget(m_piValue, 2, 2);
    gatingGrid->addWidget(new QLabel(tr("ε audit share:"), gatingBox), 3, 0);
    gatingGrid->addWidget(m_epsilon, 3, 1);
    gatingGrid->addWidget(m_epsilonValue, 3, 2);
    auto* topKLabel = new QLabel(tr("&Top-k:"), gatingBox);
    topKLabel->setBuddy(m_topK);
    gatingGrid->addWidget(topKLabel, 4, 0);
    gatingGrid->addWidget(m_topK, 4, 1, 1, 2, Qt::AlignLeft);
    layout->addWidget(gatingBox);

    // Budgets and seed.
    auto* budgets = new QGroupBox(tr("Budgets"), settings);
    auto* budgetForm = new QFormLayout(budgets);
    budgetForm->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_budgetMeasurements = new QSpinBox(budgets);
    m_budgetMeasurements->setObjectName(QStringLiteral("budgetMeasurements"));
    m_budgetMeasurements->setRange(1, 1000000);
    m_budgetMeasurements->setValue(40);
    m_budgetMeasurements->setToolTip(tr("GPU measurements, the reference and the seeds included."));
    m_budgetForecasts = new QSpinBox(budgets);
    m_budgetForecasts->setRange(0, std::numeric_limits<int>::max());
    m_budgetForecasts->setSpecialValueText(tr("auto"));
    m_budgetForecasts->setToolTip(tr("Forecasts; auto: 30 per measurement of the budget."));
    m_budgetTokens = new QSpinBox(budgets);
    m_budgetTokens->setRange(0, std::numeric_limits<int>::max());
    m_budgetTokens->setSingleStep(10000);
    m_budgetTokens->setSpecialValueText(tr("no limit"));
    m_budgetCost = new QDoubleSpinBox(budgets);
    m_budgetCost->setRange(0, 100000);
    m_budgetCost->setDecimals(2);
    m_budgetCost->setPrefix(QStringLiteral("$"));
    m_budgetCost->setSpecialValueText(tr("no limit"));
    m_budgetWall = new QSpinBox(budgets);
    m_budgetWall->setRange(0, 7 * 24 * 3600);
    m_budgetWall->setSuffix(tr(" s"));
    m_budgetWall->setSingleStep(60);
    m_budgetWall->setSpecialValueText(tr("no limit"));
    m_seed = new QSpinBox(budgets);
    m_seed->setObjectName(QStringLiteral("runSeed"));
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setValue(1);
    // One budget a row: two to a row would not fit the narrow dock of a small screen in German.
    budgetForm->addRow(tr("Measurements:"), m_budgetMeasurements);
    budgetForm->addRow(tr("Forecasts:"), m_budgetForecasts);
    budgetForm->addRow(tr("Tokens:"), m_budgetTokens);
    budgetForm->addRow(tr("Cost:"), m_budgetCost);
    budgetForm->addRow(tr("Wall time:"), m_budgetWall);
    budgetForm->addRow(tr("Seed:"), m_seed);
    // A spin box asks for the width of its largest value (2^31 for some); these fit a narrow dock instead.
    for (QAbstractSpinBox* spin : std::initializer_list<QAbstractSpinBox*>{
             m_budgetMeasurements, m_budgetForecasts, m_budgetTokens, m_budgetCost, m_budgetWall, m_seed})
        spin->setMinimumWidth(spin->fontMetrics().horizontalAdvance(tr("no limit")) + 36);
    layout->addWidget(budgets);
    layout->addStretch(1);

    // Run buttons, with the shortcuts of a debugger.
    m_start = new QAction(tr("&Start Search"), this);
    m_start->setObjectName(QStringLiteral("startAction"));
    m_start->setShortcut(Qt::Key_F5);
    m_start->setToolTip(tr("Start a new search with these settings (F5)"));
    m_pause = new QAction(tr("&Pause"), this);
    m_pause->setObjectName(QStringLiteral("pauseAction"));
    m_pause->setShortcut(Qt::Key_F6);
    m_pause->setToolTip(tr("Pause or resume the search (F6)"));
    m_step = new QAction(tr("S&tep"), this);
    m_step->setObjectName(QStringLiteral("stepAction"));
    m_step->setShortcut(Qt::Key_F10);
    m_step->setToolTip(tr("Run one iteration of a paused search (F10)"));
    m_stop = new QAction(tr("St&op"), this);
    m_stop->setObjectName(QStringLiteral("stopAction"));
    m_stop->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
    m_stop->setToolTip(tr("Stop the search; everything so far stays in its run file (Shift+F5)"));
    auto* buttons = new QHBoxLayout;
    buttons->setSpacing(4);
    for (QAction* a : {m_start, m_pause, m_step, m_stop}) {
        auto* b = new QToolButton(this);
        b->setDefaultAction(a);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        buttons->addWidget(b);
    }
    top->addLayout(buttons);

    // Progress.
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("runProgress"));
    m_progress->setFormat(tr("%v of %m measurements"));
    top->addWidget(m_progress);
    auto* numbers = new QGridLayout;
    numbers->setHorizontalSpacing(12);
    m_measurements = new QLabel(this);
    m_measurements->setObjectName(QStringLiteral("measurementsLabel"));
    m_forecasts = new QLabel(this);
    m_tokens = new QLabel(this);
    m_tokensPerMeasurement = new QLabel(this);
    m_tokensPerMeasurement->setObjectName(QStringLiteral("tokensPerMeasurementLabel"));
    m_elapsed = new QLabel(this);
    m_best = new QLabel(this);
    m_best->setObjectName(QStringLiteral("bestLabel"));
    m_calibration = new QLabel(this);
    m_calibration->setObjectName(QStringLiteral("calibrationLabel"));
    m_calibration->setWordWrap(true);
    m_calibration->setToolTip(tr("Calibration on every measured candidate with a forecast. In a gated search most "
                                 "of them were measured because their forecast was unsure or promising, so this "
                                 "sample is not representative of the forecasts the search trusted."));
    m_calibrationAudited = new QLabel(this);
    m_calibrationAudited->setObjectName(QStringLiteral("auditedCalibrationLabel"));
    m_calibrationAudited->setWordWrap(true);
    m_calibrationAudited->setToolTip(tr("Calibration on the ε-audited candidates alone: drawn at random from those "
                                        "the gate trusted and measured anyway, an unbiased sample of the forecasts "
                                        "the search acts on without measuring."));
    numbers->addWidget(m_measurements, 0, 0);
    numbers->addWidget(m_forecasts, 0, 1);
    numbers->addWidget(m_tokens, 1, 0);
    numbers->addWidget(m_elapsed, 1, 1);
    numbers->addWidget(m_tokensPerMeasurement, 2, 0, 1, 2);
    numbers->addWidget(m_best, 3, 0, 1, 2);
    numbers->addWidget(m_calibration, 4, 0, 1, 2);
    numbers->addWidget(m_calibrationAudited, 5, 0, 1, 2);
    top->addLayout(numbers);

    m_setupFields = {m_problem,
                     m_device,
                     m_surrogate,
                     m_endpoint,
                     m_model,
                     m_profile,
                     m_priceIn,
                     m_priceOut,
                     m_parametric,
                     m_llmRewrite,
                     m_llmDiff,
                     m_pool,
                     m_budgetMeasurements,
                     m_budgetForecasts,
                     m_budgetTokens,
                     m_budgetCost,
                     m_budgetWall,
                     m_seed};

    m_gatingDebounce = new QTimer(this);
    m_gatingDebounce->setSingleShot(true);
    m_gatingDebounce->setInterval(kGatingDebounceMs);
    connect(m_gatingDebounce, &QTimer::timeout, this, [this] { Q_EMIT gatingEdited(gating()); });
    for (QSlider* s : {m_tau, m_pi, m_epsilon})
        connect(s, &QSlider::valueChanged, this, [this] {
            updateGatingFields();
            scheduleGatingEdited();
        });
    connect(m_topK, &QSpinBox::valueChanged, this, &RunControlPanel::scheduleGatingEdited);
    connect(m_gatingKind, &QComboBox::currentIndexChanged, this, [this] {
        updateGatingFields();
        scheduleGatingEdited();
    });
    connect(m_surrogate, &QComboBox::currentIndexChanged, this, [this] {
        updateSurrogateFields();
        Q_EMIT surrogateChanged();
    });
    connect(m_model, &QLineEdit::textChanged, this, &RunControlPanel::surrogateChanged);
    for (QCheckBox* c : {m_llmRewrite, m_llmDiff})
        connect(c, &QCheckBox::toggled, this, &RunControlPanel::updateSurrogateFields);
    connect(m_problem, &QComboBox::activated, this, [this] { Q_EMIT problemSelected(problemDir()); });
    connect(m_device, &QComboBox::activated, this, [this] { Q_EMIT deviceSelected(deviceId()); });

    setGating(GatingConfig{});
    updateSurrogateFields();
    clearProgress();
    setRunState(EngineBridge::State::Idle);

    // A wheel turned to scroll the settings must not change the box or field that passes under the pointer (it set
    // the surrogate to "None" on the way down): fields take the wheel only once clicked into, and scroll otherwise.
    m_settingsScroll = scroll;
    for (QWidget* field : settings->findChildren<QWidget*>())
        if (qobject_cast<QComboBox*>(field) || qobject_cast<QAbstractSpinBox*>(field) ||
            qobject_cast<QAbstractSlider*>(field)) {
            field->setFocusPolicy(Qt::StrongFocus);
            field->installEventFilter(this);
        }
}

bool RunControlPanel::eventFilter(QObject* watched, QEvent* event) {
    auto* field = qobject_cast<QWidget*>(watched);
    if (event->type() == QEvent::Wheel && field && !field->hasFocus() && m_settingsScroll) {
        QCoreApplication::sendEvent(m_settingsScroll->viewport(), event);
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

SearchConfig RunControlPanel::config() const {
    SearchConfig c;
    c.problem_dir = problemDir().toStdString();
    c.device = deviceId().toStdString();
    c.pool = m_pool->poolConfig(deviceId());
    c.overlap = m_pool->overlapBatches();
    c.round = m_pool->measureRound();
    c.surrogate = surrogate().toStdString();
    c.mutators.clear();
    if (m_parametric->isChecked())
        c.mutators.push_back("parametric");
    if (m_llmRewrite->isChecked())
        c.mutators.push_back("llm-rewrite");
    if (m_llmDiff->isChecked())
        c.mutators.push_back("llm-diff");
    c.gating = gating();
    c.budgets.measurements = m_budgetMeasurements->value();
    c.budgets.forecasts = m_budgetForecasts->value();
    c.budgets.tokens = m_budgetTokens->value();
    c.budgets.cost_usd = m_budgetCost->value();
    c.budgets.wall_s = m_budgetWall->value();
    c.seed = static_cast<uint64_t>(m_seed->value());
    c.llm = nlohmann::json::object();
    if (!endpoint().isEmpty())
        c.llm["endpoint"] = endpoint().toStdString();
    if (!model().isEmpty())
        c.llm["model"] = model().toStdString();
    c.llm["profile"] = m_profile->currentData().toString().toStdString();
    c.llm["price_in_per_mtok"] = m_priceIn->value();
    c.llm["price_out_per_mtok"] = m_priceOut->value();
    const bool llm = c.surrogate == "llm" || m_llmRewrite->isChecked() || m_llmDiff->isChecked();
    if (llm) {
        try {
            // The settings file under the panel's fields, as the command line does it.
            c.llm = LlmConfig::loadSettings(c.llm);
        } catch (const std::exception&) {
            // The file's error is shown beside the fields (loadLlmSettingsFile); the fields alone are used.
        }
    }
    return c;
}

void RunControlPanel::setConfig(const SearchConfig& c) {
    setProblemDir(QString::fromStdString(c.problem_dir));
    setDeviceId(QString::fromStdString(c.device));
    setSurrogate(QString::fromStdString(c.surrogate));
    m_endpoint->setText(QString::fromStdString(c.llm.value("endpoint", std::string())));
    m_model->setText(QString::fromStdString(c.llm.value("model", std::string())));
    m_profile->setCurrentIndex(
        std::max(0, m_profile->findData(QString::fromStdString(c.llm.value("profile", std::string("auto"))))));
    m_priceIn->setValue(c.llm.value("price_in_per_mtok", 0.0));
    m_priceOut->setValue(c.llm.value("price_out_per_mtok", 0.0));
    const auto uses = [&c](const char* mutator) {
        return std::find(c.mutators.begin(), c.mutators.end(), mutator) != c.mutators.end();
    };
    m_parametric->setChecked(uses("parametric"));
    m_llmRewrite->setChecked(uses("llm-rewrite"));
    m_llmDiff->setChecked(uses("llm-diff"));
    setGating(c.gating);
    const auto clampInt = [](int64_t v) {
        return static_cast<int>(std::clamp<int64_t>(v, 0, std::numeric_limits<int>::max()));
    };
    m_budgetMeasurements->setValue(clampInt(c.budgets.measurements));
    m_budgetForecasts->setValue(clampInt(c.budgets.forecasts));
    m_budgetTokens->setValue(clampInt(c.budgets.tokens));
    m_budgetCost->setValue(c.budgets.cost_usd);
    m_budgetWall->setValue(clampInt(static_cast<int64_t>(c.budgets.wall_s)));
    m_seed->setValue(clampInt(static_cast<int64_t>(c.seed)));
    updateSurrogateFields();
}

void RunControlPanel::loadLlmSettingsFile() {
    try {
        const LlmConfig file = LlmConfig::loadSettings();
        m_endpoint->setPlaceholderText(file.endpoint.empty() ? tr("http://localhost:8000/v1")
                                                             : QString::fromStdString(file.endpoint));
        if (!file.model.empty())
            m_model->setPlaceholderText(QString::fromStdString(file.model));
        m_profile->setCurrentIndex(std::max(0, m_profile->findData(QString::fromLatin1(to_string(file.profile)))));
        m_priceIn->setValue(file.price_in_per_mtok);
        m_priceOut->setValue(file.price_out_per_mtok);
        m_settingsError.clear();
    } catch (const std::exception& e) {
        m_settingsError = QString::fromUtf8(e.what());
    }
}

GatingConfig RunControlPanel::gating() const {
    GatingConfig g;
    g.kind = gating_kind_from_string(m_gatingKind->currentData().toString().toStdString());
    g.top_k = m_topK->value();
    g.tau = sliderValue(m_tau);
    g.pi = sliderValue(m_pi);
    g.epsilon = sliderValue(m_epsilon);
    return g;
}

void RunControlPanel::setGating(const GatingConfig& g) {
    const QSignalBlocker b1(m_gatingKind), b2(m_tau), b3(m_pi), b4(m_epsilon), b5(m_topK);
    m_gatingKind->setCurrentIndex(std::max(0, m_gatingKind->findData(QString::fromLatin1(to_string(g.kind)))));
    m_tau->setValue(qRound(g.tau * 100));
    m_pi->setValue(qRound(g.pi * 100));
    m_epsilon->setValue(qRound(g.epsilon * 100));
    m_topK->setValue(g.top_k);
    updateGatingFields();
}

void RunControlPanel::scheduleGatingEdited() { m_gatingDebounce->start(); }

void RunControlPanel::updateGatingFields() {
    m_tauValue->setText(QLocale().toString(sliderValue(m_tau), 'f', 2));
    m_piValue->setText(QLocale().toString(sliderValue(m_pi), 'f', 2));
    m_epsilonValue->setText(QLocale().toString(sliderValue(m_epsilon), 'f', 2));
    const QString kind = m_gatingKind->currentData().toString();
    const bool selective = kind == QLatin1String("selective");
    m_tau->setEnabled(selective);
    m_pi->setEnabled(selective);
    m_epsilon->setEnabled(kind != QLatin1String("measure-all"));
    m_topK->setEnabled(kind == QLatin1String("top-k"));
}

void RunControlPanel::updateSurrogateFields() {
    const bool llm = surrogate() == QLatin1String("llm") || m_llmRewrite->isChecked() || m_llmDiff->isChecked();
    const bool idle = m_state != EngineBridge::State::Starting && m_state != EngineBridge::State::Running &&
                      m_state != EngineBridge::State::Paused && m_state != EngineBridge::State::Stopping;
    for (QWidget* w : std::initializer_list<QWidget*>{m_endpoint, m_model, m_profile, m_priceIn, m_priceOut})
        w->setEnabled(llm && idle);
    m_keyNote->setVisible(llm);
    if (!m_settingsError.isEmpty())
        m_keyNote->setText(tr("The LLM settings file cannot be used: %1").arg(m_settingsError));
}

QString RunControlPanel::problemDir() const {
    return m_problem->currentIndex() < 0 ? QString() : m_problem->currentData(ProblemListModel::DirRole).toString();
}

bool RunControlPanel::setProblemDir(const QString& dir) {
    const int row = m_problem->findData(dir, ProblemListModel::DirRole);
    if (row < 0)
        return false;
    m_problem->setCurrentIndex(row);
    return true;
}

QString RunControlPanel::deviceId() const {
    return m_device->currentIndex() < 0 ? QString() : m_device->currentData(DeviceListModel::IdRole).toString();
}

bool RunControlPanel::setDeviceId(const QString& id) {
    const int row = m_device->findData(id, DeviceListModel::IdRole);
    if (row < 0)
        return false;
    m_device->setCurrentIndex(row);
    return true;
}

QString RunControlPanel::surrogate() const { return m_surrogate->currentData().toString(); }

void RunControlPanel::setSurrogate(const QString& surrogate) {
    const int index = m_surrogate->findData(surrogate);
    if (index >= 0)
        m_surrogate->setCurrentIndex(index);
}

QString RunControlPanel::endpoint() const { return m_endpoint->text().trimmed(); }

QString RunControlPanel::model() const { return m_model->text().trimmed(); }

void RunControlPanel::setBudget(int64_t measurements) {
    m_budgetMeasurements->setValue(static_cast<int>(measurements));
}

void RunControlPanel::setRunState(EngineBridge::State state) {
    m_state = state;
    using S = EngineBridge::State;
    const bool active = state == S::Starting || state == S::Running || state == S::Paused || state == S::Stopping;
    m_start->setEnabled(!active);
    m_pause->setEnabled(state == S::Running || state == S::Paused);
    m_pause->setText(state == S::Paused ? tr("&Resume") : tr("&Pause"));
    m_step->setEnabled(state == S::Paused);
    m_stop->setEnabled(active && state != S::Stopping);
    for (QWidget* w : m_setupFields)
        w->setEnabled(!active);
    updateSurrogateFields();
}

void RunControlPanel::showProgress(const SearchProgress& p, bool gated) {
    const QLocale locale;
    m_progress->setRange(0, static_cast<int>(std::max<int64_t>(1, p.budget_measurements)));
    m_progress->setValue(static_cast<int>(std::min(p.measurements, std::max<int64_t>(1, p.budget_measurements))));
    m_measurements->setText(tr("Measurements: %1 of %2")
                                .arg(locale.toString(static_cast<qlonglong>(p.measurements)),
                                     locale.toString(static_cast<qlonglong>(p.budget_measurements))));
    m_forecasts->setText(p.abstained > 0
                             ? tr("Forecasts: %1 (%2 deferred to a measurement)")
                                   .arg(locale.toString(static_cast<qlonglong>(p.forecasts)))
                                   .arg(locale.toString(static_cast<qlonglong>(p.abstained)))
                             : tr("Forecasts: %1").arg(locale.toString(static_cast<qlonglong>(p.forecasts))));
    m_tokens->setText(p.cost_usd > 0 ? tr("Tokens: %1 ($%2)")
                                           .arg(locale.toString(static_cast<qlonglong>(p.tokens)))
                                           .arg(locale.toString(p.cost_usd, 'f', 2))
                                     : tr("Tokens: %1").arg(locale.toString(static_cast<qlonglong>(p.tokens))));
    // An LLM search is planned by what it costs per measurement (docs/llm.md): the figure and, in the tooltip, where
    // the tokens went and the budgets.
    m_tokensPerMeasurement->setVisible(p.llm_calls > 0);
    if (p.llm_calls > 0) {
        const QString tokens = locale.toString(p.tokensPerMeasurement(), 'f', 0);
        m_tokensPerMeasurement->setText(
            p.cost_usd > 0
                ? tr("Per measurement: %1 tokens ($%2)").arg(tokens, locale.toString(p.costPerMeasurement(), 'f', 3))
                : tr("Per measurement: %1 tokens").arg(tokens));
        const auto count = [&](int64_t n) { return locale.toString(static_cast<qlonglong>(n)); };
        m_tokensPerMeasurement->setToolTip(
            tr("Forecasts: %1 tokens in %2 calls. Rewrites: %3 tokens in %4 calls. Diffs: %5 tokens in %6 calls. "
               "Token budget: %7.")
                .arg(count(p.llm_forecast.tokens), count(p.llm_forecast.calls), count(p.llm_rewrite.tokens),
                     count(p.llm_rewrite.calls), count(p.llm_diff.tokens), count(p.llm_diff.calls),
                     p.budget_tokens > 0 ? count(p.budget_tokens) : tr("none")));
    }
    m_elapsed->setText(tr("Elapsed: %1").arg(formatElapsed(p.elapsed_s)));
    m_best->setText(p.best_speedup > 0 ? tr("Best speedup: <b>%1×</b> (candidate #%2)")
                                             .arg(locale.toString(p.best_speedup, 'f', 3))
                                             .arg(p.best_candidate)
                                       : tr("Best speedup: none yet"));
    m_calibration->setText(
        p.calibration_n > 0
            ? tr("Surrogate on %1 measured: accuracy %2 (majority bin %3), skill over "
                 "climatology: Brier %4, CRPS %5; ECE %6, AURC %7")
                  .arg(p.calibration_n)
                  .arg(locale.toString(p.calibration_accuracy, 'f', 2),
                       locale.toString(p.calibration_majority_accuracy, 'f', 2),
                       skillText(p.calibration_brier_skill, locale), skillText(p.calibration_crps_skill, locale),
                       locale.toString(p.calibration_ece, 'f', 3), locale.toString(p.calibration_aurc, 'f', 3))
            : QString());
    // The figure on the audited candidates alone; with none audited yet the line says so instead of a number.
    if (p.calibration_audited_n > 0)
        m_calibrationAudited->setText(
            tr("On %1 audited (a random share of the trusted): accuracy %2 (majority bin %3), skill over "
               "climatology: Brier %4, CRPS %5; ECE %6, AURC %7")
                .arg(p.calibration_audited_n)
                .arg(locale.toString(p.calibration_audited_accuracy, 'f', 2),
                     locale.toString(p.calibration_audited_majority_accuracy, 'f', 2),
                     skillText(p.calibration_audited_brier_skill, locale),
                     skillText(p.calibration_audited_crps_skill, locale),
                     locale.toString(p.calibration_audited_ece, 'f', 3),
                     locale.toString(p.calibration_audited_aurc, 'f', 3)));
    else if (p.calibration_n > 0 && gated && gating().kind != GatingKind::MeasureAll)
        m_calibrationAudited->setText(tr("Audited (a random share of the trusted): no audited candidates yet"));
    else
        m_calibrationAudited->clear();
}

void RunControlPanel::clearProgress() {
    SearchProgress p;
    p.budget_measurements = m_budgetMeasurements->value();
    showProgress(p);
}

void RunControlPanel::readSettings(const QSettings& s) {
    setSurrogate(s.value(QStringLiteral("run/surrogate"), QStringLiteral("local")).toString());
    m_endpoint->setText(s.value(QStringLiteral("run/endpoint")).toString());
    m_model->setText(s.value(QStringLiteral("run/model")).toString());
    const QStringList mutators =
        s.value(QStringLiteral("run/mutators"), QStringList{QStringLiteral("parametric")}).toStringList();
    m_parametric->setChecked(mutators.contains(QStringLiteral("parametric")));
    m_llmRewrite->setChecked(mutators.contains(QStringLiteral("llm-rewrite")));
    m_llmDiff->setChecked(mutators.contains(QStringLiteral("llm-diff")));
    GatingConfig g;
    try {
        g.kind = gating_kind_from_string(
            s.value(QStringLiteral("run/gating"), QString::fromLatin1(to_string(g.kind))).toString().toStdString());
    } catch (const std::exception&) {
        // an unknown name from another version: keep the default
    }
    g.tau = s.value(QStringLiteral("run/tau"), g.tau).toDouble();
    g.pi = s.value(QStringLiteral("run/pi"), g.pi).toDouble();
    g.epsilon = s.value(QStringLiteral("run/epsilon"), g.epsilon).toDouble();
    g.top_k = s.value(QStringLiteral("run/topK"), g.top_k).toInt();
    setGating(g);
    m_budgetMeasurements->setValue(s.value(QStringLiteral("run/budgetMeasurements"), 40).toInt());
    m_budgetForecasts->setValue(s.value(QStringLiteral("run/budgetForecasts"), 0).toInt());
    m_budgetTokens->setValue(s.value(QStringLiteral("run/budgetTokens"), 0).toInt());
    m_budgetCost->setValue(s.value(QStringLiteral("run/budgetCost"), 0.0).toDouble());
    m_budgetWall->setValue(s.value(QStringLiteral("run/budgetWall"), 0).toInt());
    m_seed->setValue(s.value(QStringLiteral("run/seed"), 1).toInt());
    m_pool->readSettings(s);
    clearProgress();
}

void RunControlPanel::writeSettings(QSettings& s) const {
    // Never the API key: it lives in the environment or ~/.config/kerncast/llm.json.
    s.setValue(QStringLiteral("run/surrogate"), surrogate());
    s.setValue(QStringLiteral("run/endpoint"), endpoint());
    s.setValue(QStringLiteral("run/model"), model());
    QStringList mutators;
    for (const auto& m : config().mutators)
        mutators << QString::fromStdString(m);
    s.setValue(QStringLiteral("run/mutators"), mutators);
    const GatingConfig g = gating();
    s.setValue(QStringLiteral("run/gating"), QString::fromLatin1(to_string(g.kind)));
    s.setValue(QStringLiteral("run/tau"), g.tau);
    s.setValue(QStringLiteral("run/pi"), g.pi);
    s.setValue(QStringLiteral("run/epsilon"), g.epsilon);
    s.setValue(QStringLiteral("run/topK"), g.top_k);
    s.setValue(QStringLiteral("run/budgetMeasurements"), m_budgetMeasurements->value());
    s.setValue(QStringLiteral("run/budgetForecasts"), m_budgetForecasts->value());
    s.setValue(QStringLiteral("run/budgetTokens"), m_budgetTokens->value());
    s.setValue(QStringLiteral("run/budgetCost"), m_budgetCost->value());
    s.setValue(QStringLiteral("run/budgetWall"), m_budgetWall->value());
    s.setValue(QStringLiteral("run/seed"), m_seed->value());
    m_pool->writeSettings(s);
}

QString RunControlPanel::missingChoice() const {
    const SearchConfig c = config();
    if (c.problem_dir.empty())
        return tr("Choose a problem to search.");
    if (c.device.empty())
        return tr("No device can measure: choose a GPU or a replay device.");
    if (c.mutators.empty())
        return tr("Choose at least one mutator.");
    return {};
}

void RunControlPanel::bindTo(EngineBridge* bridge) {
    connect(m_pause, &QAction::triggered, bridge, [bridge] {
        if (bridge->state() == EngineBridge::State::Paused)
            bridge->resume();
        else
            bridge->pause();
    });
    connect(m_step, &QAction::triggered, bridge, &EngineBridge::step);
    connect(m_stop, &QAction::triggered, bridge, &EngineBridge::stop);
    connect(this, &RunControlPanel::gatingEdited, bridge, [bridge](const GatingConfig& gating) {
        if (bridge->isActive())
            bridge->setGating(gating);
    });
}

void RunControlPanel::applyDemoSettings() {
    setSurrogate(QStringLiteral("local"));
    GatingConfig gating;
    gating.kind = GatingKind::Selective;
    setGating(gating);
    setBudget(40);
}

}  // namespace kerncast
