// T4 results both ways: the benchmark hub's T4 files (Kernel Tuner before 1.1: no times.benchmark, "miliseconds")
// read as caches, with failures kept apart by kind, and a cache written as the T4 results and metadata that Kernel
// Tuner's get_t4_results gives, which read back to the same entries.
#include "core/error.h"
#include "core/kernel_tuner_cache.h"
#include "core/t4_results.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace kerncast;

namespace {

// Five configurations of saxpy's family, two of them failed (one to compile, one at run time), as the hub's T4
// files are written; saxpy_failures_cache.json is the same as a Kernel Tuner cache.
const std::string kT4 = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_failures_T4.json";
const std::string kT4Gz = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_failures_T4.json.gz";
const std::string kCache = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_failures_cache.json";
const std::vector<std::string> kFamilyOrder = {"BLOCK", "VEC", "ITEMS"};

// One T4 result with the given configuration, invalidity, time measurement and extra JSON for its "times".
std::string result(const std::string& config, const std::string& invalidity, const std::string& time,
                   const std::string& times = R"("compilation": 1, "runtimes": [2, 2])") {
    return R"({"configuration": )" + config + R"(, "times": {)" + times + R"(}, "invalidity": ")" + invalidity +
           R"(", "correctness": 1, "measurements": [{"name": "time", "value": )" + time + R"(, "unit": ""}]})";
}

std::string t4(const std::string& results, const std::string& unit = "milliseconds") {
    return R"({"metadata": {"timeunit": ")" + unit + R"("}, "schema_version": "1.0.0", "results": [)" + results + "]}";
}

}  // namespace

class TestT4Results : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsTheHubsT4WithItsFailures() {
        const T4Results r = load_t4_results(kT4, kFamilyOrder);
        const KernelTunerCache& c = r.cache;
        QCOMPARE(r.time_unit, std::string("miliseconds"));  // Kernel Tuner's spelling before 1.1
        QCOMPARE(c.keys, kFamilyOrder);                     // the family's order, not the file's alphabet
        QCOMPARE(c.entries.size(), size_t(5));
        QVERIFY(c.kernel_name.empty());  // T4 results name no kernel
        const KernelTunerEntry* ok = c.find({64, 1, 1});
        QVERIFY(ok && ok->time_ms);
        QCOMPARE(*ok->time_ms, 0.631231);
        QCOMPARE(ok->times_ms, (std::vector<double>{0.631199, 0.631231, 0.632031}));
        QCOMPARE(ok->compile_time_ms, 275.5);
        QCOMPARE(ok->verification_time_ms, 20.25);
        QCOMPARE(ok->framework_time_ms, 1.5);
        QCOMPARE(ok->timestamp, std::string("2026-06-18 09:42:13.000000+00:00"));
        QCOMPARE(ok->extra["GFLOP/s"].get<double>(), 212.6);
        // No times.benchmark in these files: the benchmark time is what the runs add up to.
        QCOMPARE(r.benchmark_from_runtimes, 5);
        QCOMPARE(ok->benchmark_time_ms, 0.631199 + 0.631231 + 0.632031);
        // Failures stay failures, compile and run time apart, with the time they took to compile.
        const KernelTunerEntry* compile = c.find({256, 4, 8});
        QVERIFY(compile && !compile->time_ms);
        QCOMPARE(compile->error, std::string("CompilationFailedConfig"));
        QCOMPARE(compile->compile_time_ms, 812.0);
        const KernelTunerEntry* runtime = c.find({512, 1, 16});
        QVERIFY(runtime && !runtime->time_ms);
        QCOMPARE(runtime->error, std::string("RuntimeFailedConfig"));
        QCOMPARE(runtime->compile_time_ms, 300.25);
        // Without an order to follow, the tunables are sorted.
        QCOMPARE(load_t4_results(kT4).cache.keys, (std::vector<std::string>{"BLOCK", "ITEMS", "VEC"}));
    }

    void readsAGzippedT4() {
        const T4Results plain = load_t4_results(kT4, kFamilyOrder);
        const T4Results gz = load_t4_results(kT4Gz, kFamilyOrder);
        QCOMPARE(gz.cache.entries.size(), plain.cache.entries.size());
        for (size_t i = 0; i < gz.cache.entries.size(); ++i) {
            QCOMPARE(gz.cache.entries[i].key(), plain.cache.entries[i].key());
            QCOMPARE(gz.cache.entries[i].error, plain.cache.entries[i].error);
        }
    }

    void readsEveryInvalidityAndTimeUnit() {
        const T4Results r =
            parse_t4_results(t4(result(R"({"B": 1})", "correct", "0.002",
                                       R"("compilation": 0.5, "benchmark": 0.25, "runtimes": [0.002])") +
                                    "," + result(R"({"B": 2})", "timeout", "\"x\"") + "," +
                                    result(R"({"B": 3})", "correctness", "\"x\"") + "," +
                                    result(R"({"B": 4})", "constraints", "\"InvalidConfig\""),
                                "seconds"),
                             "s.json");
        const auto& e = r.cache.entries;
        QCOMPARE(*e[0].time_ms, 2.0);  // seconds to ms
        QCOMPARE(e[0].compile_time_ms, 500.0);
        QCOMPARE(e[0].benchmark_time_ms, 250.0);
        QCOMPARE(r.benchmark_from_runtimes, 3);
        QCOMPARE(e[1].error, std::string("RuntimeFailedConfig"));
        QCOMPARE(e[1].extra["kerncast_status"].get<std::string>(), std::string("timeout"));
        QCOMPARE(e[2].extra["kerncast_status"].get<std::string>(), std::string("incorrect"));
        QCOMPARE(e[3].error, std::string("InvalidConfig"));
        QCOMPARE(r.cache.values, (std::vector<std::vector<int64_t>>{{1, 2, 3, 4}}));
    }

    void rejectsMalformedResults_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not T4") << R"({"cache": {}})"
                                << "x.json: not T4 results: expected a JSON object with a \"results\" list";
        QTest::newRow("no results") << QString::fromStdString(t4("")) << "holds no result";
        QTest::newRow("twice") << QString::fromStdString(t4(result(R"({"B": 1, "V": 2})", "correct", "1") + "," +
                                                            result(R"({"B": 1, "V": 2})", "correct", "2")))
                               << "results[1] (B=1 V=2) appears twice: results[0] is the same configuration";
        QTest::newRow("other tunables") << QString::fromStdString(t4(result(R"({"B": 1, "V": 2})", "correct", "1") +
                                                                     "," + result(R"({"B": 1})", "correct", "2")))
                                        << "results[1] tunes B; results[0] tunes B, V";
        QTest::newRow("not an integer") << QString::fromStdString(t4(result(R"({"B": 1.5})", "correct", "1")))
                                        << "results[0]: B = 1.5; Kerncast tunables are integers";
        QTest::newRow("unknown invalidity")
            << QString::fromStdString(t4(result(R"({"B": 1})", "broken", "1")))
            << "results[0] (B=1): invalidity \"broken\" is none of correct, compile, runtime";
        QTest::newRow("correct without a time")
            << QString::fromStdString(t4(result(R"({"B": 1})", "correct", "\"RuntimeFailedConfig\"")))
            << "results[0] (B=1) is \"correct\" but has no numeric \"time\" measurement";
        QTest::newRow("unknown unit") << QString::fromStdString(t4(result(R"({"B": 1})", "correct", "1"), "fortnights"))
                                      << "metadata.timeunit \"fortnights\" is not a time unit";
        QTest::newRow("not JSON") << "{\"results\": ["
                                  << "x.json:1:";
    }

    void rejectsMalformedResults() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            parse_t4_results(text.toStdString(), "x.json");
            QFAIL("malformed T4 results were read");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
    }

    void writesWhatGetT4ResultsWrites() {
        const KernelTunerCache cache = load_kernel_tuner_cache(kCache);
        const auto doc = t4_results_json(cache);
        QCOMPARE(doc["schema_version"].get<std::string>(), std::string("1.0.0"));
        QCOMPARE(doc["metadata"]["timeunit"].get<std::string>(), std::string("milliseconds"));
        QCOMPARE(doc["results"].size(), size_t(5));
        const auto& ok = doc["results"][0];
        QCOMPARE(ok["timestamp"].get<std::string>(), std::string("2026-06-18 09:42:13.000000+00:00"));
        QCOMPARE(ok["configuration"].dump(), std::string(R"({"BLOCK":64,"VEC":1,"ITEMS":1})"));
        QCOMPARE(ok["times"].dump(), std::string(R"({"compilation":275.5,"benchmark":41.5,"framework":1.5,)"
                                                 R"("search_algorithm":0.0,"validation":20.25,)"
                                                 R"("runtimes":[0.631199,0.631231,0.632031]})"));
        QCOMPARE(ok["invalidity"].get<std::string>(), std::string("correct"));
        QCOMPARE(ok["correctness"].get<int>(), 1);
        QCOMPARE(ok["measurements"].dump(), std::string(R"([{"name":"time","value":0.631231,"unit":"ms"},)"
                                                        R"({"name":"GFLOP/s","value":212.6,"unit":""}])"));
        QCOMPARE(ok["objectives"].dump(), std::string(R"(["time"])"));
        const auto& compile = doc["results"][2];
        QCOMPARE(compile["invalidity"].get<std::string>(), std::string("compile"));
        QCOMPARE(compile["correctness"].get<int>(), 1);  // as get_t4_results writes it: it was not checked
        QCOMPARE(compile["measurements"][0]["value"].get<std::string>(), std::string("CompilationFailedConfig"));
        QCOMPARE(compile["times"]["compilation"].get<double>(), 812.0);
        QCOMPARE(compile["times"]["runtimes"].size(), size_t(0));
        QCOMPARE(doc["results"][3]["invalidity"].get<std::string>(), std::string("runtime"));

        const auto meta = t4_metadata_json(cache);
        QCOMPARE(meta["schema_version"].get<std::string>(), std::string("1.0.0"));
        QVERIFY(meta["metadata"]["hardware"]["hardware_description"].is_array());
        QCOMPARE(meta["metadata"]["hardware"]["hardware_description"][0]["product"].get<std::string>(),
                 std::string("NVIDIA H200"));
        QVERIFY(meta["metadata"]["environment"]["device_query"].is_object());
        QVERIFY(meta["metadata"]["environment"]["requirements"].is_array());
        QCOMPARE(meta["metadata"]["kerncast"]["kernel_name"].get<std::string>(), std::string("saxpy_family"));
        QCOMPARE(meta["metadata"]["kerncast"]["tune_params_keys"].dump(), std::string(R"(["BLOCK","VEC","ITEMS"])"));
    }

    void cacheToT4AndBackKeepsEveryEntry() {
        const KernelTunerCache cache = load_kernel_tuner_cache(kCache);
        const T4Results back = parse_t4_results(python_json_dumps(t4_results_json(cache)), "back.json", cache.keys);
        QCOMPARE(back.benchmark_from_runtimes, 0);  // written with times.benchmark
        QCOMPARE(back.cache.keys, cache.keys);
        QCOMPARE(back.cache.entries.size(), cache.entries.size());
        for (size_t i = 0; i < cache.entries.size(); ++i) {
            const auto& a = cache.entries[i];
            const auto& b = back.cache.entries[i];
            QCOMPARE(b.values, a.values);
            QCOMPARE(b.time_ms, a.time_ms);
            QCOMPARE(b.error, a.error);
            QCOMPARE(b.times_ms, a.times_ms);
            QCOMPARE(b.compile_time_ms, a.compile_time_ms);
            QCOMPARE(b.verification_time_ms, a.verification_time_ms);
            QCOMPARE(b.benchmark_time_ms, a.benchmark_time_ms);
            QCOMPARE(b.strategy_time_ms, a.strategy_time_ms);
            QCOMPARE(b.framework_time_ms, a.framework_time_ms);
            QCOMPARE(b.timestamp, a.timestamp);
            QCOMPARE(b.extra.dump(), a.extra.dump());
        }
    }
};

QTEST_GUILESS_MAIN(TestT4Results)
#include "tst_t4_results.moc"
