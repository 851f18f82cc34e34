#include "core/error.h"
#include "core/gzip_file.h"
#include "core/kernel_tuner_cache.h"
#include "tests/support/fixture_text.h"

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <fstream>
#include <regex>

using namespace kerncast;

namespace {

// Written by Kernel Tuner 1.4.0's own process_cache/store_cache/close_cache (tests/data/kernel_tuner/write_fixture.py).
const std::string kClosed = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json";
// The same writer, stopped before close_cache: what an interrupted tuning session leaves behind.
const std::string kOpen = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_open_cache.json";
// kClosed compressed with gzip -9n, as the benchmark hub ships its caches.
const std::string kGzipped = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json.gz";

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
        QCOMPARE(e->strategy_time_ms, 0.0);
        QCOMPARE(e->framework_time_ms, 0.0);
        QCOMPARE(e->compile_time_ms, 275.113777);
        QCOMPARE(e->benchmark_time_ms, 41.9232);
        QCOMPARE(e->timestamp, std::string("2026-06-18 09:42:13.000000+00:00"));
        QVERIFY(e->extra.empty());  // every field of this entry is one of Kernel Tuner's own
    }

    void readsAGzippedCache() {
        // Told apart by its first bytes: the same cache, entry for entry, with the same line numbers.
        const KernelTunerCache plain = load_kernel_tuner_cache(kClosed);
        const KernelTunerCache gz = load_kernel_tuner_cache(kGzipped);
        QCOMPARE(gz.entries.size(), plain.entries.size());
        for (size_t i = 0; i < gz.entries.size(); ++i) {
            QCOMPARE(gz.entries[i].key(), plain.entries[i].key());
            QCOMPARE(*gz.entries[i].time_ms, *plain.entries[i].time_ms);
            QCOMPARE(gz.entries[i].line, plain.entries[i].line);
        }
        // A damaged or cut file is an error that names it, not a parse of garbage.
        std::ifstream in(kGzipped, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QTemporaryDir dir;
        const std::string cut = dir.filePath("cut.json.gz").toStdString();
        std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        try {
            load_kernel_tuner_cache(cut);
            QFAIL("a truncated gzip file was read");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(cut + ": the gzip stream is truncated") != std::string::npos, e.what());
        }
        std::string flipped = bytes;
        flipped[20] = static_cast<char>(flipped[20] ^ 0x5a);
        const std::string bad = dir.filePath("bad.json.gz").toStdString();
        std::ofstream(bad, std::ios::binary) << flipped;
        try {
            load_kernel_tuner_cache(bad);
            QFAIL("a damaged gzip file was read");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(bad + ": ") == 0, e.what());
        }
        // Two gzip members one after the other decompress as one text, as gzip -d does.
        QCOMPARE(gunzip(bytes + bytes, "twice.gz"), read(kClosed) + read(kClosed));
    }

    void readsTheHubsLayoutsWithTheirLines() {
        // The benchmark hub's caches are written one configuration per line, all on one line, or indented: every
        // layout reads, and each entry knows its line.
        const std::string entry_a = "\"64,1\": {\"B\": 64, \"V\": 1, \"time\": 0.5}";
        const std::string entry_b = "\"128,2\": {\"B\": 128, \"V\": 2, \"time\": \"RuntimeFailedConfig\"}";
        const std::string header =
            "\"device_name\": \"A100\", \"kernel_name\": \"k\", \"problem_size\": [1024], "
            "\"tune_params_keys\": [\"B\", \"V\"], \"tune_params\": {\"B\": [64, 128], \"V\": [1, 2]}, "
            "\"objective\": \"time\", \"cache\": ";
        const auto one_line =
            parse_kernel_tuner_cache("{" + header + "{" + entry_a + ", " + entry_b + "}}", "one.json");
        QCOMPARE(one_line.entries.size(), size_t(2));
        QCOMPARE(one_line.entries[1].line, 1);
        QCOMPARE(one_line.entries[1].error, std::string("RuntimeFailedConfig"));
        const auto indented = parse_kernel_tuner_cache(
            "{\n  " + header + "{\n    " + entry_a + ",\n    " + entry_b + "\n  }\n}", "in.json");
        QCOMPARE(indented.entries[0].line, 3);
        QCOMPARE(indented.entries[1].line, 4);
    }

    void readsElevenThousandEntriesQuickly() {
        // A hub cache holds up to 11,000 configurations (tens of MB): reading one is one pass over its text.
        std::string entries;
        std::string values;
        const int n = 11000;
        for (int i = 0; i < n; ++i) {
            values += (i ? ", " : "") + std::to_string(i);
            entries += std::string(i ? "," : "") + "\n\"" + std::to_string(i) + "\": {\"X\": " + std::to_string(i) +
                       ", \"time\": 1.5, \"times\": [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, "
                       "1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],"
                       " \"compile_time\": 900.5, \"verification_time\": 0, \"benchmark_time\": 120.25, "
                       "\"GFLOP/s\": 1948.2, \"strategy_time\": 0, \"framework_time\": 2.5, \"timestamp\": "
                       "\"2023-12-22 09:54:05.502007+00:00\"}";
        }
        const std::string text = "{\n\"device_name\": \"A100\",\n\"kernel_name\": \"k\",\n\"tune_params_keys\": "
                                 "[\n\"X\"\n],\n\"tune_params\": {\"X\": [" +
                                 values + "]},\n\"cache\": {" + entries + "}\n}";
        const auto t0 = std::chrono::steady_clock::now();
        const KernelTunerCache c = parse_kernel_tuner_cache(text, "big.json");
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QCOMPARE(c.entries.size(), size_t(n));
        QCOMPARE(c.entries.back().line, 8 + n);
        // How long it took is said, not tested (0.3 s on the 2-core CI machine): a test's time depends on the load.
        qInfo("%d entries (%.1f MB) read in %.2f s", n, text.size() / 1e6, s);
    }

    void writesEveryFieldKernelTunersT4ConversionNeeds() {
        // file_utils.get_t4_results reads compile_time, benchmark_time, framework_time, strategy_time and
        // verification_time of every entry (a KeyError without one), and the timestamp when there is one.
        const auto c = parse_kernel_tuner_cache(
            small_cache("\n\"64,1\": {\"B\": 64, \"V\": 1, \"__error__\": \"CompilationFailedConfig\"},\n\"128,1\": "
                        "{\"B\": 128, \"V\": 1, \"time\": 0.25, \"strategy_time\": 1.5, \"framework_time\": 0.5, "
                        "\"timestamp\": \"2026-01-02 03:04:05.678000+00:00\"}"),
            "small.json");
        QCOMPARE(c.entries[1].strategy_time_ms, 1.5);
        QCOMPARE(c.entries[1].framework_time_ms, 0.5);
        const std::string out = write_kernel_tuner_cache(c);
        QVERIFY2(out.find("\"64,1\": {\"B\": 64, \"V\": 1, \"__error__\": \"CompilationFailedConfig\", "
                          "\"compile_time\": 0, \"verification_time\": 0, \"benchmark_time\": 0, "
                          "\"strategy_time\": 0, \"framework_time\": 0}") != std::string::npos,
                 out.c_str());
        QVERIFY2(out.find("\"benchmark_time\": 0, \"strategy_time\": 1.5, \"framework_time\": 0.5, \"timestamp\": "
                          "\"2026-01-02 03:04:05.678000+00:00\"}") != std::string::npos,
                 out.c_str());
    }

    void timestampsAsKernelTunerWritesThem() {
        // str(datetime.now(timezone.utc)) in Kernel Tuner's sequential runner.
        QCOMPARE(kernel_tuner_timestamp(1703238845.502007), std::string("2023-12-22 09:54:05.502007+00:00"));
        QCOMPARE(kernel_tuner_timestamp(0), std::string("1970-01-01 00:00:00.000000+00:00"));
        QCOMPARE(kernel_tuner_timestamp_of_iso("2026-01-02T03:04:05.678Z"),
                 std::string("2026-01-02 03:04:05.678000+00:00"));
        QCOMPARE(kernel_tuner_timestamp_of_iso("2026-01-02T03:04:05Z"),
                 std::string("2026-01-02 03:04:05.000000+00:00"));
        QCOMPARE(kernel_tuner_timestamp_of_iso("yesterday"), std::string("yesterday"));
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
