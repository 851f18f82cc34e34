// The run panel's LLM fields: filled from the settings file (~/.config/kerncast/llm.json), and what a search started
// from the panel gets: the file's settings under the panel's fields, prices and profile included, never the key.
// Its progress lines: the calibration on every measured candidate, and beside it on the audited ones alone.
#include "app/gui/run_control_panel.h"
#include "app/gui/translations.h"
#include "engine/llm/llm_client.h"
#include "widgets/device_list_model.h"
#include "widgets/problem_list_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace kerncast;

class TestRunControlPanel : public QObject {
    Q_OBJECT

    QTemporaryDir m_config;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_config.isValid());
        qputenv("XDG_CONFIG_HOME", m_config.path().toUtf8());
        qputenv("KERNCAST_API_KEY", "sk-panel-test-0123456789-SECRET");
        std::filesystem::create_directories(m_config.path().toStdString() + "/kerncast");
        const nlohmann::json settings = {{"endpoint", "http://gpu-box:8000/v1"},
                                         {"model", "Qwen/Qwen3-32B"},
                                         {"profile", "vllm"},
                                         {"price_in_per_mtok", 0.15},
                                         {"price_out_per_mtok", 0.6},
                                         {"max_tokens", 32768}};
        std::ofstream(LlmConfig::settingsPath()) << settings.dump();
    }

    void llmFieldsComeFromTheSettingsFile() {
        ProblemListModel problems;
        DeviceListModel devices;
        RunControlPanel panel(&problems, &devices);
        auto* endpoint = panel.findChild<QLineEdit*>(QStringLiteral("runEndpoint"));
        auto* profile = panel.findChild<QComboBox*>(QStringLiteral("runLlmProfile"));
        auto* priceIn = panel.findChild<QDoubleSpinBox*>(QStringLiteral("runPriceIn"));
        auto* priceOut = panel.findChild<QDoubleSpinBox*>(QStringLiteral("runPriceOut"));
        QVERIFY(endpoint && profile && priceIn && priceOut);
        QCOMPARE(endpoint->placeholderText(), QStringLiteral("http://gpu-box:8000/v1"));
        QCOMPARE(profile->currentData().toString(), QStringLiteral("vllm"));
        QCOMPARE(priceIn->value(), 0.15);
        QCOMPARE(priceOut->value(), 0.6);

        // A search with the LLM: the file's settings, the panel's fields over them.
        panel.findChild<QComboBox*>(QStringLiteral("runSurrogate"))->setCurrentIndex(1);  // LLM endpoint
        profile->setCurrentIndex(profile->findData(QStringLiteral("auto")));
        priceOut->setValue(2.5);
        SearchConfig c = panel.config();
        QCOMPARE(c.surrogate, std::string("llm"));
        QCOMPARE(c.llm["endpoint"].get<std::string>(), std::string("http://gpu-box:8000/v1"));
        QCOMPARE(c.llm["model"].get<std::string>(), std::string("Qwen/Qwen3-32B"));
        QCOMPARE(c.llm["profile"].get<std::string>(), std::string("auto"));
        QCOMPARE(c.llm["price_in_per_mtok"].get<double>(), 0.15);
        QCOMPARE(c.llm["price_out_per_mtok"].get<double>(), 2.5);
        QCOMPARE(c.llm["max_tokens"].get<int>(), 32768);
        QVERIFY(c.llm.dump().find("SECRET") == std::string::npos);

        endpoint->setText(QStringLiteral("http://other:9000/v1"));
        c = panel.config();
        QCOMPARE(c.llm["endpoint"].get<std::string>(), std::string("http://other:9000/v1"));
    }

    // A selective search's calibration line is of the candidates its gate chose to measure; the line under it gives
    // the same figures on the epsilon-audited ones (a random share of those it trusted), or says plainly that none is
    // audited yet: never a number on no candidate.
    void showsTheAuditedCalibrationBesideTheMeasuredOne() {
        ProblemListModel problems;
        DeviceListModel devices;
        RunControlPanel panel(&problems, &devices);
        QLabel* measured = panel.calibrationLabel();
        QLabel* audited = panel.auditedCalibrationLabel();
        QVERIFY(measured && audited);
        QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("auditedCalibrationLabel")), audited);
        GatingConfig g;
        g.kind = GatingKind::Selective;
        panel.setGating(g);

        SearchProgress p;
        p.budget_measurements = 40;
        panel.showProgress(p);  // nothing measured yet: neither line
        QCOMPARE(measured->text(), QString());
        QCOMPARE(audited->text(), QString());

        ForecastMetrics all;
        all.n = 31;
        all.accuracy = 0.71;
        all.majority_accuracy = 0.45;
        all.brier_skill = 0.3;
        all.crps_skill = 0.4;
        p.setCalibration(all);
        panel.showProgress(p);
        QVERIFY(measured->text().startsWith(QStringLiteral("Surrogate on 31 measured: accuracy 0.71")));
        QCOMPARE(audited->text(), QStringLiteral("Audited (a random share of the trusted): no audited candidates yet"));

        ForecastMetrics some;
        some.n = 7;
        some.accuracy = 4.0 / 7.0;
        some.majority_accuracy = 3.0 / 7.0;
        some.brier_skill = 0.25;
        some.crps_skill = std::numeric_limits<double>::quiet_NaN();  // every audited outcome in one bin
        some.ece = 0.1234;
        some.aurc = 0.2;
        p.setAuditedCalibration(some);
        panel.showProgress(p);
        QCOMPARE(audited->text(),
                 QStringLiteral("On 7 audited (a random share of the trusted): accuracy 0.57 (majority "
                                "bin 0.43), skill over climatology: Brier +0.250, CRPS n/a; ECE "
                                "0.123, AURC 0.200"));
        QVERIFY(measured->text().startsWith(QStringLiteral("Surrogate on 31 measured")));

        // Measure-all measures every candidate, and a pair-set evaluation comes measured: no audit line for them.
        p.setAuditedCalibration(ForecastMetrics{});
        panel.showProgress(p, false);
        QCOMPARE(audited->text(), QString());
        g.kind = GatingKind::MeasureAll;
        panel.setGating(g);
        panel.showProgress(p);
        QCOMPARE(audited->text(), QString());
        panel.clearProgress();
        QCOMPARE(audited->text(), QString());

        // In German, numbers in the German way.
        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        const auto restoreEnglish =
            qScopeGuard([] { install_translations(QLocale(QLocale::English, QLocale::UnitedStates)); });
        RunControlPanel german(&problems, &devices);
        german.setGating(GatingConfig{});
        german.showProgress(p);
        QCOMPARE(german.auditedCalibrationLabel()->text(),
                 QStringLiteral("Geprüft (zufällig aus den vertrauten gezogen): noch keine geprüften Kandidaten"));
        p.setAuditedCalibration(some);
        german.showProgress(p);
        QVERIFY2(german.auditedCalibrationLabel()->text().startsWith(QStringLiteral(
                     "Auf 7 geprüften Kandidaten (zufällig aus den vertrauten gezogen): Genauigkeit 0,57")),
                 qPrintable(german.auditedCalibrationLabel()->text()));
    }

    // What an LLM search costs per measurement, and where the tokens went; nothing for a search without LLM calls.
    void showsTheLlmSpendPerMeasurement() {
        ProblemListModel problems;
        DeviceListModel devices;
        RunControlPanel panel(&problems, &devices);
        QLabel* label = panel.tokensPerMeasurementLabel();
        QVERIFY(label);
        QCOMPARE(panel.findChild<QLabel*>(QStringLiteral("tokensPerMeasurementLabel")), label);
        SearchProgress p;
        p.budget_measurements = 30;
        p.measurements = 20;
        panel.showProgress(p);
        QVERIFY(label->isHidden());
        p.llm_calls = 12;
        p.tokens = 81000;
        p.cost_usd = 0.5;
        p.llm_rewrite = {10, 60000, 0.4, 3};
        p.llm_forecast = {2, 21000, 0.1, 0};
        p.budget_tokens = 1200000;
        panel.showProgress(p);
        QVERIFY(!label->isHidden());
        QCOMPARE(label->text(), QStringLiteral("Per measurement: 4,050 tokens ($0.025)"));
        QCOMPARE(label->toolTip(), QStringLiteral("Forecasts: 21,000 tokens in 2 calls. Rewrites: 60,000 tokens in 10 "
                                                  "calls. Diffs: 0 tokens in 0 calls. Token budget: 1,200,000."));
        panel.clearProgress();
        QVERIFY(label->isHidden());

        QVERIFY(install_translations(QLocale(QLocale::German, QLocale::Germany)));
        const auto restoreEnglish =
            qScopeGuard([] { install_translations(QLocale(QLocale::English, QLocale::UnitedStates)); });
        RunControlPanel german(&problems, &devices);
        p.cost_usd = 0;
        p.budget_tokens = 0;
        german.showProgress(p);
        QCOMPARE(german.tokensPerMeasurementLabel()->text(), QStringLiteral("Pro Messung: 4.050 Tokens"));
        QVERIFY2(german.tokensPerMeasurementLabel()->toolTip().endsWith(QStringLiteral("Token-Budget: keines.")),
                 qPrintable(german.tokensPerMeasurementLabel()->toolTip()));
    }
};

QTEST_MAIN(TestRunControlPanel)
#include "tst_run_control_panel.moc"
