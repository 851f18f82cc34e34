#pragma once
// The run control dock: what to search (problem, device, surrogate, mutators), how to gate (policy and thresholds,
// live while a search runs), the budgets and the seed; Start, Pause/Resume, Step and Stop; and the search's
// progress. It only collects settings and shows state: the main window turns them into bridge calls.

#include "app/gui/engine_bridge.h"

#include <QWidget>

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QScrollArea;
class QSettings;
class QSlider;
class QSpinBox;
class QTimer;

namespace kerncast {

class PoolSettingsWidget;

class DeviceListModel;
class ProblemListModel;

class RunControlPanel : public QWidget {
    Q_OBJECT
public:
    // Time the sliders wait after the last change before a new gating is announced (one command per gesture).
    static constexpr int kGatingDebounceMs = 250;

    RunControlPanel(ProblemListModel* problems, DeviceListModel* devices, QWidget* parent = nullptr);

    // Everything but the problem folder and device comes from the panel's fields.
    SearchConfig config() const;
    // What a search of config() still lacks, as a sentence for the user; empty when it can start.
    QString missingChoice() const;
    // Start/Pause/Step/Stop and the gating sliders drive this bridge (the gating only while it is steerable).
    void bindTo(EngineBridge* bridge);
    // The embedded demo's settings: local surrogate, selective gating, 40 measurements.
    void applyDemoSettings();
    // Shows a stored run's settings (an opened run): problem, device, surrogate and its endpoint and model,
    // mutators, gating, budgets and seed. A problem or device that is not listed here keeps the current choice.
    void setConfig(const SearchConfig& config);
    GatingConfig gating() const;
    void setGating(const GatingConfig& gating);

    QString problemDir() const;
    bool setProblemDir(const QString& dir);
    QString deviceId() const;
    bool setDeviceId(const QString& id);
    QString surrogate() const;  // local | llm | none
    void setSurrogate(const QString& surrogate);
    QString endpoint() const;
    QString model() const;
    void setBudget(int64_t measurements);

    // Enables the actions and fields for a state of the bridge. canResumeRun: an opened run can be continued.
    void setRunState(EngineBridge::State state);
    // gated: the run's forecasts went through the gate (false for a pair-set evaluation, whose every pair comes
    // measured); with the policy shown here other than measure-all, the audited calibration's line then says so when
    // no candidate is audited yet.
    void showProgress(const SearchProgress& progress, bool gated = true);
    void clearProgress();

    void readSettings(const QSettings& settings);
    void writeSettings(QSettings& settings) const;

    QAction* startAction() const { return m_start; }
    QAction* pauseAction() const { return m_pause; }
    QAction* stepAction() const { return m_step; }
    QAction* stopAction() const { return m_stop; }

    QSlider* tauSlider() const { return m_tau; }
    QSlider* piSlider() const { return m_pi; }
    QSlider* epsilonSlider() const { return m_epsilon; }
    QSpinBox* topKSpin() const { return m_topK; }
    QComboBox* gatingCombo() const { return m_gatingKind; }
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* measurementsLabel() const { return m_measurements; }
    QLabel* bestLabel() const { return m_best; }
    QLabel* tokensLabel() const { return m_tokens; }
    QLabel* tokensPerMeasurementLabel() const { return m_tokensPerMeasurement; }
    QLabel* elapsedLabel() const { return m_elapsed; }
    // The surrogate's calibration on every measured candidate, and on the ε-audited ones alone (a random share of
    // those the gate trusted: the sample the first line's, chosen by the gate, is not).
    QLabel* calibrationLabel() const { return m_calibration; }
    QLabel* auditedCalibrationLabel() const { return m_calibrationAudited; }

Q_SIGNALS:
    // The gating fields changed (debounced).
    void gatingEdited(const kerncast::GatingConfig& gating);
    void problemSelected(const QString& dir);
    void deviceSelected(const QString& id);
    // The surrogate or its model changed (the status bar names them).
    void surrogateChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void updateGatingFields();
    void updateSurrogateFields();
    void scheduleGatingEdited();
    // Fills the LLM fields from ~/.config/kerncast/llm.json: endpoint and model as placeholders (an empty field
    // means the file's value), profile and prices as values.
    void loadLlmSettingsFile();

    QComboBox* m_problem = nullptr;
    QComboBox* m_device = nullptr;
    PoolSettingsWidget* m_pool = nullptr;
    QComboBox* m_surrogate = nullptr;
    QScrollArea* m_settingsScroll = nullptr;  // the settings under the buttons
    QLineEdit* m_endpoint = nullptr;
    QLineEdit* m_model = nullptr;
    QComboBox* m_profile = nullptr;
    QDoubleSpinBox* m_priceIn = nullptr;
    QDoubleSpinBox* m_priceOut = nullptr;
    QString m_settingsError;
    QLabel* m_keyNote = nullptr;
    QCheckBox* m_parametric = nullptr;
    QCheckBox* m_llmRewrite = nullptr;
    QCheckBox* m_llmDiff = nullptr;
    QComboBox* m_gatingKind = nullptr;
    QSlider* m_tau = nullptr;
    QSlider* m_pi = nullptr;
    QSlider* m_epsilon = nullptr;
    QLabel* m_tauValue = nullptr;
    QLabel* m_piValue = nullptr;
    QLabel* m_epsilonValue = nullptr;
    QSpinBox* m_topK = nullptr;
    QSpinBox* m_budgetMeasurements = nullptr;
    QSpinBox* m_budgetForecasts = nullptr;
    QSpinBox* m_budgetTokens = nullptr;
    QDoubleSpinBox* m_budgetCost = nullptr;
    QSpinBox* m_budgetWall = nullptr;
    QSpinBox* m_seed = nullptr;
    QList<QWidget*> m_setupFields;  // fixed while a search runs

    QAction* m_start = nullptr;
    QAction* m_pause = nullptr;
    QAction* m_step = nullptr;
    QAction* m_stop = nullptr;

    QProgressBar* m_progress = nullptr;
    QLabel* m_measurements = nullptr;
    QLabel* m_forecasts = nullptr;
    QLabel* m_tokens = nullptr;
    QLabel* m_tokensPerMeasurement = nullptr;  // what the LLM costs per measurement, by kind of call in its tooltip
    QLabel* m_elapsed = nullptr;
    QLabel* m_best = nullptr;
    QLabel* m_calibration = nullptr;
    QLabel* m_calibrationAudited = nullptr;
    QTimer* m_gatingDebounce = nullptr;
    EngineBridge::State m_state = EngineBridge::State::Idle;
};

}  // namespace kerncast
