#include "core/error.h"
#include "core/kernel_tuner_cache.h"
#include "tests/support/fixture_text.h"

#include <QTest>

using namespace kerncast;

namespace {

// Written by Kernel Tuner 1.4.0's own process_cache/store_cache/close_cache (tests/data/kernel_tuner/write_fixture.py).
const std::string kClosed = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json";
// The same writer, stopped before close_cache: what an interrupted tuning session leaves behind.
const std::string kOpen = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_open_cache.json";

std::string read(const std::string& path) {
    return test::fixtureText(QString::fromStdString(path).mid(int(std::string(KERNCAST_TEST_DATA "/").size())))
        .toStdString();
}

// A small cache in Kernel Tuner's layout, with `entries` as the lines between the header and the closing brackets.
std::string small_cache(const std::string& entries) {
    return "{\n\"device_name\": \"NVIDIA H200\",\n\"kernel_name\": \"k\",\n\"problem_size\": [\n1024\n],\n"
           "\"tune_params_keys\": [\n\"B\",\n\"V\"\n],\n\"tune_params\": {\n\"B\": [\n64,\n128\n],\n\"V\": [\n1,\n2\n]"
           "\n},\n\"objective\": \"time\",\n\"cache\": {" +
           entries + "}\n}";
}

}  // namespace

class TestKernelTunerCache : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsACacheKernelTunerWrote() {
        const KernelTunerCache c = load_kernel_tuner_cache(kClosed);
        QCOMPARE(c.device_name, std::string("NVIDIA H200"));
        QCOMPARE(c.kernel_name, std::string("saxpy_family"));
        QCOMPARE(c.problem_size, (std::vector<int64_t>{67108864}));
        QCOMPARE(c.keys, (std::vector<std::string>{"BLOCK", "VEC", "ITEMS"}));  // declared order, not sorted
        QCOMPARE(c.values[0], (std::vector<int64_t>{64, 128, 256, 512, 1024}));
        QCOMPARE(c.entries.size(), size_t(70));
        const KernelTunerEntry* e = c.find({64, 1, 1});
        QVERIFY(e);
        QCOMPARE(e->key(), std::string("64,1,1"));
        QVERIFY(e->time_ms);
        QCOMPARE(*e->time_ms, 0.631231);
        QCOMPARE(e->times_ms.size(), size_t(10));
        QCOMPARE(e->line, 35);  // the line Kernel Tuner wrote it on
        QCOMPARE(e->extra["strategy_time"].get<int>(), 0);
    }

    void writesByteForByteWhatKernelTunerWrote() {
        // Reading Kernel Tuner's file and writing it again gives the same bytes: header layout (json.dumps with
        // indent=""), one entry per line with Python's separators, and close_cache()'s ending.
        const std::string original = read(kClosed);
        QCOMPARE(write_kernel_tuner_cache(parse_kernel_tuner_cache(original, kClosed)), original);
    }

    void readsAnInterruptedCache() {
        const std::string text = read(kOpen);
        QVERIFY(text.back() == ',');  // as store_cache() leaves it
        const KernelTunerCache c = parse_kernel_tuner_cache(text, kOpen);
        QCOMPARE(c.entries.size(), size_t(5));
        QCOMPARE(c.entries.back().key(), load_kernel_tuner_cache(kClosed).entries[4].key());
    }

    void readsFailedConfigurations() {
        // Kernel Tuner 1.x writes "__error__"; older versions put the failure's name in "time".
        const auto c = parse_kernel_tuner_cache(
            small_cache(
                "\n\"64,1\": {\"B\": 64, \"V\": 1, \"__error__\": \"CompilationFailedConfig\", \"compile_time\": "
                "1.5, \"verification_time\": 0, \"benchmark_time\": 0},\n\"64,2\": {\"B\": 64, \"V\": 2, \"time\": "
                "\"RuntimeFailedConfig\"},\n\"128,1\": {\"B\": 128, \"V\": 1, \"time\": 0.25}"),
            "small.json");
        QCOMPARE(c.entries.size(), size_t(3));
        QVERIFY(!c.entries[0].time_ms);
        QCOMPARE(c.entries[0].error, std::string("CompilationFailedConfig"));
        QCOMPARE(c.entries[0].compile_time_ms, 1.5);
        QCOMPARE(c.entries[1].error, std::string("RuntimeFailedConfig"));
        QCOMPARE(*c.entries[2].time_ms, 0.25);
        // A failure is written the way Kernel Tuner 1.x writes it, with no time.
        const std::string out = write_kernel_tuner_cache(c);
        QVERIFY(out.find("\"64,1\": {\"B\": 64, \"V\": 1, \"__error__\": \"CompilationFailedConfig\", "
                         "\"compile_time\": 1.5") != std::string::npos);
        QCOMPARE(parse_kernel_tuner_cache(out, "again.json").entries[1].error, std::string("RuntimeFailedConfig"));
    }

    void rejectsMalformedCaches_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not JSON") << QString::fromStdString(
                                         small_cache("\n\"64,1\": {\"B\": 64, \"V\": 1, \"time\": }"))
                                  << "small.json:23: not a Kernel Tuner cache";
        QTest::newRow("key out of order")
            << QString::fromStdString(small_cache("\n\"1,64\": {\"B\": 64, \"V\": 1, \"time\": 0.1}"))
            << "small.json:23: configuration key \"1,64\" does not match its values (64,1)";
        QTest::newRow("value not declared")
            << QString::fromStdString(small_cache("\n\"256,1\": {\"B\": 256, \"V\": 1, \"time\": 0.1}"))
            << "small.json:23: configuration \"256,1\": B = 256 is not among tune_params[\"B\"]";
        QTest::newRow("no time") << QString::fromStdString(small_cache("\n\"64,1\": {\"B\": 64, \"V\": 1}"))
                                 << "neither a \"time\" nor an \"__error__\"";
        QTest::newRow("tunable missing") << QString::fromStdString(
                                                small_cache("\n\"64,1\": {\"B\": 64, \"time\": 0.1}"))
                                         << "configuration \"64,1\" has no integer \"V\"";
        QTest::newRow("no tune_params_keys") << "{\"device_name\": \"x\", \"kernel_name\": \"k\", \"cache\": {\n}\n}"
                                             << "missing header field \"tune_params_keys\"";
        QTest::newRow("nested too deep") << QString::fromStdString(small_cache(
                                                "\n\"64,1\": " + std::string(100000, '[') + std::string(100000, ']')))
                                         << "small.json: not a Kernel Tuner cache: invalid JSON at line 23";
        QTest::newRow("time past the largest double")
            << QString::fromStdString(small_cache("\n\"64,1\": {\"B\": 64, \"V\": 1, \"time\": 1e999}"))
            << "the number 1e999 is not finite";
        QTest::newRow("string time") << QString::fromStdString(
                                            small_cache("\n\"64,1\": {\"B\": 64, \"V\": 1, \"time\": \"fast\"}"))
                                     << "\"time\" must be a number or a failure name";
    }

    void rejectsMalformedCaches() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            parse_kernel_tuner_cache(text.toStdString(), "small.json");
            QFAIL("a malformed cache was accepted");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
    }

    void pythonSeparatorsAndEscapes() {
        const auto j = nlohmann::ordered_json::parse(R"({"a": [1, 2.5, "ü"], "b": {"c": null, "d": true}})");
        QCOMPARE(python_json_dumps(j), std::string(R"({"a": [1, 2.5, "\u00fc"], "b": {"c": null, "d": true}})"));
    }

    void floatsAsPythonReprWritesThem_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("python");  // repr(value) in CPython 3.11
        QTest::newRow("shortest digits") << 0.184128 << "0.184128";
        QTest::newRow("sum with a tail") << 0.1 + 0.2 << "0.30000000000000004";
        QTest::newRow("integral") << 275.0 << "275.0";
        QTest::newRow("small, fixed") << 0.0001 << "0.0001";
        QTest::newRow("small, exponent") << 0.00001234 << "1.234e-05";
        QTest::newRow("large, fixed") << 1234567890123456.0 << "1234567890123456.0";
        QTest::newRow("large, exponent") << 1e16 << "1e+16";
        QTest::newRow("negative") << -2.5e-7 << "-2.5e-07";
        QTest::newRow("zero") << 0.0 << "0.0";
    }

    void floatsAsPythonReprWritesThem() {
        QFETCH(double, value);
        QFETCH(QString, python);
        QCOMPARE(QString::fromStdString(python_json_dumps(nlohmann::ordered_json(value))), python);
    }
};

QTEST_GUILESS_MAIN(TestKernelTunerCache)
#include "tst_kernel_tuner_cache.moc"
