// The run panel's LLM fields: filled from the settings file (~/.config/kerncast/llm.json), and what a search started
// from the panel gets: the file's settings under the panel's fields, prices and profile included, never the key.
#include "app/gui/run_control_panel.h"
#include "engine/llm/llm_client.h"
#include "widgets/device_list_model.h"
#include "widgets/problem_list_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

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
};

QTEST_MAIN(TestRunControlPanel)
#include "tst_run_control_panel.moc"
