// Kernel Tuner caches and T4 results both ways: a recording exported as Kernel Tuner itself writes it, a Kernel Tuner
// cache (plain or gzip, as the benchmark hub ships them) or T4 results imported as a recording the replay device
// answers from, with failures and the recorded compile and benchmark times kept, the reference's time from the
// problem's reference configuration, and (when its source is at hand) Kernel Tuner's own reader and simulation
// runner on our export.
#include "tests/support/cli_runner.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_tuner_cache.h"
#include "core/problem_library.h"
#include "engine/cli/cli.h"
#include "engine/gpu/statistics.h"
#include "engine/replay/kernel_tuner_interop.h"
#include "engine/replay/replay_device.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace kerncast;
using kerncast::test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kKernelTunerWrote = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json";
const std::string kKernelTunerWroteGz = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json.gz";
// Five saxpy configurations, one failed to compile and one at run time (old style: the failure's name in "time"),
// each with its compile, verification, benchmark, strategy and framework times; the same as hub-style T4 results.
const std::string kFailures = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_failures_cache.json";
const std::string kFailuresT4Gz = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_failures_T4.json.gz";

std::string resources() { return cli::resources_dir(); }
std::string saxpy_recording() { return resources() + "/recordings/nvidia-h200/saxpy.jsonl"; }

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// A copy of the saxpy problem whose problem.json names a reference configuration (as a T1 import writes it).
std::string saxpy_with_reference_configuration(const QTemporaryDir& dir, const std::string& configuration) {
    const fs::path folder = fs::path(dir.path().toStdString()) / "saxpy";
    fs::remove_all(folder);
    fs::copy(resources() + "/problems/saxpy", folder, fs::copy_options::recursive);
    auto doc = nlohmann::ordered_json::parse(read_file((folder / "problem.json").string()));
    doc["reference_configuration"] = nlohmann::ordered_json::parse(configuration);
    std::ofstream(folder / "problem.json") << doc.dump(2);
    return folder.string();
}

// The replay device's answer for one configuration of the saxpy family from the recordings in `folder`.
Measurement replayed(const std::string& folder, const std::string& problem_dir, const Bindings& tunables) {
    ReplayDevice replay(folder);
    MeasureRequest req;
    req.problem_dir = problem_dir;
    req.candidate.source = load_problem_folder(problem_dir).family->source;
    req.candidate.tunables = tunables;
    return replay.measure(req).measurement;
}

Bindings saxpy_config(int64_t block, int64_t vec, int64_t items) {
    return {{"BLOCK", block}, {"VEC", vec}, {"ITEMS", items}};
}

const std::regex kKernelTunerTimestamp(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00:00)");

}  // namespace

class TestKernelTunerInterop : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recordingExportMatchesWhatKernelTunerWrote() {
        // The fixture was written by Kernel Tuner's own cache code from the same recording: our export must agree
        // on every header field Kernel Tuner checks and on every configuration's key and times.
        const ProblemBundle saxpy = load_problem_folder(resources() + "/problems/saxpy");
        const KernelTunerCache ours =
            kernel_tuner_cache_from_recording(Recording::load(saxpy_recording()), saxpy.problem, *saxpy.family);
        const KernelTunerCache theirs = load_kernel_tuner_cache(kKernelTunerWrote);
        QCOMPARE(ours.device_name, theirs.device_name);
        QCOMPARE(ours.kernel_name, theirs.kernel_name);        // the kernel function, not the problem's name
        QCOMPARE(ours.problem_size, theirs.problem_size);      // the sizes, not the problem's name
        QCOMPARE(ours.keys, theirs.keys);                      // declared order, not alphabetical
        QCOMPARE(ours.values, theirs.values);                  // full value lists
        QCOMPARE(ours.entries.size(), theirs.entries.size());  // every configuration, not just a run's few
        for (const auto& t : theirs.entries) {
            const KernelTunerEntry* o = ours.find(t.values);
            QVERIFY2(o, t.key().c_str());
            QCOMPARE(o->key(), t.key());
            QCOMPARE(*o->time_ms, *t.time_ms);  // ms
            QCOMPARE(o->times_ms, t.times_ms);
        }
        // Written in Kernel Tuner's layout, it reads back the same.
        const auto again = parse_kernel_tuner_cache(write_kernel_tuner_cache(ours), "again.json");
        QCOMPARE(again.entries.size(), ours.entries.size());
        QCOMPARE(again.extra["kerncast"]["problem"].get<std::string>(), std::string("saxpy"));
    }

    void importedCacheReplaysAsARecording() {
        // Kernel Tuner's file has no reference time: the import asks for it and says so.
        const ProblemBundle saxpy = load_problem_folder(resources() + "/problems/saxpy");
        const KernelTunerCache theirs = load_kernel_tuner_cache(kKernelTunerWrote);
        try {
            recording_from_kernel_tuner_cache(theirs, kKernelTunerWrote, saxpy, std::nullopt);
            QFAIL("imported without a reference time");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("no reference time") != std::string::npos, e.what());
        }
        const KernelTunerImport imported = recording_from_kernel_tuner_cache(theirs, kKernelTunerWrote, saxpy, 1.25);
        QCOMPARE(imported.configurations, 70);
        QCOMPARE(imported.failed, 0);

        QTemporaryDir dir;
        const fs::path folder = fs::path(dir.path().toStdString()) / "kt-h200";
        fs::create_directories(folder);
        std::ofstream(folder / "saxpy.jsonl") << recording_jsonl(imported.recording);
        // The replay device answers each configuration with Kernel Tuner's time, against the given reference.
        ReplayDevice replay(folder.string());
        const Recording original = Recording::load(saxpy_recording());
        int checked = 0;
        for (const auto& entry : original.entries) {
            if (entry.tunables.empty())
                continue;
            MeasureRequest req;
            req.problem_dir = resources() + "/problems/saxpy";
            req.candidate.source = saxpy.family->source;
            req.candidate.tunables = entry.tunables;
            const MeasureOutcome out = replay.measure(req);
            QCOMPARE(out.measurement.status, Status::Ok);
            QCOMPARE(out.measurement.candidate->median_us, entry.measurement.candidate->median_us);
            QVERIFY(std::abs(out.measurement.speedup - 1250.0 / entry.measurement.candidate->median_us) < 1e-9);
            ++checked;
        }
        QCOMPARE(checked, 70);
    }

    void roundTripThroughTheCacheKeepsEveryMeasurement() {
        // Our own export carries the reference time, so export -> import gives back the recording's family.
        const ProblemBundle softmax = load_problem_folder(resources() + "/problems/softmax");
        const Recording original = Recording::load(resources() + "/recordings/nvidia-h200/softmax.jsonl");
        const std::string text =
            write_kernel_tuner_cache(kernel_tuner_cache_from_recording(original, softmax.problem, *softmax.family));
        const auto imported = recording_from_kernel_tuner_cache(parse_kernel_tuner_cache(text, "softmax.json"),
                                                                "softmax.json", softmax, std::nullopt);
        QCOMPARE(imported.recording.header.device.uuid, original.header.device.uuid);
        QCOMPARE(imported.recording.header.pytorch_eager_us, original.header.pytorch_eager_us);
        int family = 0;
        for (const auto& e : original.entries) {
            if (e.tunables.empty())
                continue;
            const RecordingEntry* back = imported.recording.find(e.source_hash);
            QVERIFY2(back, e.label.c_str());
            QCOMPARE(back->label, e.label);
            QCOMPARE(back->measurement.status, e.measurement.status);
            // Kernel Tuner keeps milliseconds: us -> ms -> us is exact to the last bit or two.
            auto same = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
            QVERIFY(same(back->measurement.candidate->median_us, e.measurement.candidate->median_us));
            const auto& got = back->measurement.candidate->samples_us;
            const auto& want = e.measurement.candidate->samples_us;
            QCOMPARE(got.size(), want.size());
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(same(got[i], want[i]), e.label.c_str());
            ++family;
        }
        QCOMPARE(imported.configurations, family);
        const RecordingEntry* ref = imported.recording.find(content_hash(softmax.reference.source, {}));
        QVERIFY(ref);
    }

    void importRefusesAnotherKernelsCache_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("kernel") << "kernel_name"
                                << "\"vector_add\""
                                << "the cache is for kernel \"vector_add\"";
        QTest::newRow("sizes") << "problem_size"
                               << "[4096]"
                               << "is not saxpy's benchmark case [67108864]";
        QTest::newRow("tunables") << "tune_params_keys"
                                  << "[\"BLOCK\", \"VEC\"]"
                                  << "the cache tunes BLOCK, VEC";
    }

    void importRefusesAnotherKernelsCache() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        KernelTunerCache c = load_kernel_tuner_cache(kKernelTunerWrote);
        const auto v = nlohmann::json::parse(value.toStdString());
        if (field == "kernel_name")
            c.kernel_name = v.get<std::string>();
        else if (field == "problem_size")
            c.problem_size = v.get<std::vector<int64_t>>();
        else
            c.keys = v.get<std::vector<std::string>>();
        const ProblemBundle saxpy = load_problem_folder(resources() + "/problems/saxpy");
        try {
            recording_from_kernel_tuner_cache(c, kKernelTunerWrote, saxpy, 1.0);
            QFAIL("a cache of something else was imported");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find(kKernelTunerWrote) != std::string::npos, e.what());
        }
    }

    void cliExportsAndImportsAndASearchReplaysTheImport() {
        QTemporaryDir dir;
        const std::string cache = dir.filePath("saxpy.json").toStdString();
        auto r = run_cli({"export", "--recording", saxpy_recording(), "--format", "kernel-tuner", "--out", cache});
        QVERIFY2(r.code == 0, r.err.c_str());
        QCOMPARE(load_kernel_tuner_cache(cache).entries.size(), size_t(70));

        const std::string folder = dir.filePath("imported-h200").toStdString();
        fs::create_directories(folder);
        r = run_cli({"--json", "import", "--kernel-tuner", kKernelTunerWrote, "--problem", "saxpy", "--out",
                     folder + "/saxpy.jsonl", "--reference-ms", "1.4"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["configurations"].get<int>(), 70);

        // A search replays the imported family: its configurations are measured, never invented.
        const std::string run = dir.filePath("s.sqlite").toStdString();
        r = run_cli({"--json", "search", "--problem", "saxpy", "--device", "replay:" + folder, "--surrogate", "none",
                     "--gating", "measure-all", "--budget", "8", "--run", run, "--quiet"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QVERIFY2(j["best_speedup"].get<double>() > 1.0, r.out.c_str());
        QVERIFY(j["best_label"].get<std::string>().rfind("family ", 0) == 0);

        // A run exports the configurations it measured, keyed as Kernel Tuner keys them.
        r = run_cli(
            {"export", "--run", run, "--format", "kernel-tuner", "--out", dir.filePath("run.json").toStdString()});
        QVERIFY2(r.code == 0, r.err.c_str());
        const KernelTunerCache fromRun = load_kernel_tuner_cache(dir.filePath("run.json").toStdString());
        QCOMPARE(fromRun.keys, (std::vector<std::string>{"BLOCK", "VEC", "ITEMS"}));
        QCOMPARE(fromRun.kernel_name, std::string("saxpy_family"));
        QVERIFY(!fromRun.entries.empty());
        const KernelTunerCache all = load_kernel_tuner_cache(kKernelTunerWrote);
        for (const auto& e : fromRun.entries) {
            QCOMPARE(*e.time_ms, *all.find(e.values)->time_ms);
            QVERIFY2(std::regex_match(e.timestamp, kKernelTunerTimestamp), e.timestamp.c_str());
        }
        QVERIFY(fromRun.extra["kerncast"]["reference_time"].is_number());  // the run measured the reference

        // The same run as T4 results, which import back as the configurations it measured.
        const std::string t4 = dir.filePath("run-t4.json").toStdString();
        r = run_cli({"export", "--run", run, "--format", "t4", "--out", t4, "--metadata",
                     dir.filePath("meta.json").toStdString()});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY(fs::exists(dir.filePath("meta.json").toStdString()));
        r = run_cli(
            {"--json", "import", "--t4", t4, "--problem", "saxpy", "--out", dir.filePath("run.jsonl").toStdString()});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["configurations"].get<size_t>(), fromRun.entries.size());

        r = run_cli({"import", "--kernel-tuner", kKernelTunerWrote, "--problem", "saxpy"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("--out") != std::string::npos, r.err.c_str());
    }

    void gzippedCacheImportsWithEveryRecordedTime() {
        // The benchmark hub ships its caches as .json.gz: the import reads them as they are, and each
        // configuration's recorded compile, verification and benchmark times reach the replay device's answer.
        QTemporaryDir dir;
        const std::string folder = dir.filePath("kt-h200").toStdString();
        fs::create_directories(folder);
        auto r = run_cli({"--json", "import", "--kernel-tuner", kKernelTunerWroteGz, "--problem", "saxpy", "--out",
                          folder + "/saxpy.jsonl", "--reference-ms", "1.25"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["configurations"].get<int>(), 70);
        const KernelTunerCache cache = load_kernel_tuner_cache(kKernelTunerWrote);
        std::vector<double> compile, benchmark;
        for (const auto& e : cache.entries) {
            compile.push_back(e.compile_time_ms);
            benchmark.push_back(e.benchmark_time_ms);
        }
        // 70 configurations: the median is the mean of the 35th and 36th.
        auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return (v[34] + v[35]) / 2;
        };
        QCOMPARE(j["median_compile_ms"].get<double>(), median(compile));
        QCOMPARE(j["median_benchmark_ms"].get<double>(), median(benchmark));
        QCOMPARE(j["reference_from"].get<std::string>(), std::string("given"));
        const std::string problem = resources() + "/problems/saxpy";
        for (const auto& e : cache.entries) {
            const Measurement m = replayed(folder, problem, saxpy_config(e.values[0], e.values[1], e.values[2]));
            QCOMPARE(m.status, Status::Ok);
            QCOMPARE(m.compile_ms, e.compile_time_ms);
            QCOMPARE(m.verify_ms, e.verification_time_ms);
            QCOMPARE(m.time_ms, e.benchmark_time_ms);
        }
        // The summary a person reads names the medians.
        r = run_cli({"import", "--kernel-tuner", kKernelTunerWroteGz, "--problem", "saxpy", "--out",
                     folder + "/again.jsonl", "--reference-ms", "1.25"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("Recorded time per configuration: median compile ") != std::string::npos, r.out.c_str());
    }

    void failuresAreKeptApartWithTheirTimes() {
        QTemporaryDir dir;
        const std::string folder = dir.filePath("kt-h200").toStdString();
        fs::create_directories(folder);
        const auto r = run_cli({"--json", "import", "--kernel-tuner", kFailures, "--problem", "saxpy", "--out",
                                folder + "/saxpy.jsonl", "--reference-ms", "1.0"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["configurations"].get<int>(), 5);
        QCOMPARE(j["failed"].get<int>(), 2);
        QCOMPARE(j["compile_failed"].get<int>(), 1);
        QCOMPARE(j["runtime_failed"].get<int>(), 1);
        QCOMPARE(j["median_compile_ms"].get<double>(), 300.25);  // of 275.5, 301, 812, 300.25, 250
        QCOMPARE(j["median_benchmark_ms"].get<double>(), 30.5);  // of 41.5, 30.5, 0, 0.75, 33
        const std::string problem = resources() + "/problems/saxpy";
        const Measurement compile = replayed(folder, problem, saxpy_config(256, 4, 8));
        QCOMPARE(compile.status, Status::CompileError);
        QCOMPARE(compile.compile_ms, 812.0);
        QVERIFY(!compile.candidate);
        const Measurement runtime = replayed(folder, problem, saxpy_config(512, 1, 16));
        QCOMPARE(runtime.status, Status::LaunchError);
        QCOMPARE(runtime.compile_ms, 300.25);
        QCOMPARE(runtime.time_ms, 0.75);
        const Measurement ok = replayed(folder, problem, saxpy_config(128, 2, 4));
        QCOMPARE(ok.status, Status::Ok);
        QCOMPARE(ok.candidate->samples_us.size(), size_t(3));
        QCOMPARE(ok.compile_ms, 301.0);
        QCOMPARE(ok.verify_ms, 19.0);
        QCOMPARE(ok.time_ms, 30.5);
    }

    void t4ImportKeepsFailuresApartWithTheirTimes() {
        // The hub's T4 files (.json.gz, Kernel Tuner before 1.1: no times.benchmark): the same failures as the
        // cache, compile and run time apart, and the benchmark time is what the runs add up to.
        QTemporaryDir dir;
        const std::string folder = dir.filePath("t4").toStdString();
        fs::create_directories(folder);
        auto r = run_cli({"--json", "import", "--t4", kFailuresT4Gz, "--problem", "saxpy", "--out",
                          folder + "/saxpy.jsonl", "--reference-ms", "1.0"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["configurations"].get<int>(), 5);
        QCOMPARE(j["compile_failed"].get<int>(), 1);
        QCOMPARE(j["runtime_failed"].get<int>(), 1);
        QCOMPARE(j["benchmark_from_runtimes"].get<int>(), 5);
        QCOMPARE(j["device"].get<std::string>(), std::string("saxpy_failures"));  // the file's name, less _T4
        const std::string problem = resources() + "/problems/saxpy";
        const Measurement compile = replayed(folder, problem, saxpy_config(256, 4, 8));
        QCOMPARE(compile.status, Status::CompileError);
        QCOMPARE(compile.compile_ms, 812.0);
        QCOMPARE(replayed(folder, problem, saxpy_config(512, 1, 16)).status, Status::LaunchError);
        const Measurement ok = replayed(folder, problem, saxpy_config(64, 1, 1));
        QCOMPARE(ok.status, Status::Ok);
        QCOMPARE(ok.candidate->median_us, 631.231);
        QCOMPARE(ok.compile_ms, 275.5);
        QCOMPARE(ok.verify_ms, 20.25);
        QCOMPARE(ok.time_ms, 0.631199 + 0.631231 + 0.632031);
        QCOMPARE(ok.device.name, std::string("saxpy_failures"));

        r = run_cli({"import", "--t4", kFailuresT4Gz, "--problem", "saxpy", "--out", folder + "/saxpy.jsonl",
                     "--reference-ms", "1.0", "--device-name", "NVIDIA A100-PCIE-40GB"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QVERIFY2(r.out.find("on NVIDIA A100-PCIE-40GB (2 failed: 1 to compile, 1 at run time)") != std::string::npos,
                 r.out.c_str());
        QVERIFY2(r.out.find("5 results have no times.benchmark") != std::string::npos, r.out.c_str());
        r = run_cli({"import", "--t4", kFailuresT4Gz, "--kernel-tuner", kFailures, "--problem", "saxpy", "--out",
                     folder + "/x.jsonl"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("not both") != std::string::npos, r.err.c_str());
    }

    void aCacheThatNamesNoDeviceTakesTheFilesName() {
        // Some of the hub's caches have an empty device_name (MI250X.json.gz): the device is the file's name, or
        // --device-name.
        std::string text = read_file(kFailures);
        text.replace(text.find("\"NVIDIA H200\""), 13, "\"\"");
        QTemporaryDir dir;
        const std::string cache = dir.filePath("MI250X.json").toStdString();
        std::ofstream(cache) << text;
        auto r = run_cli({"--json", "import", "--kernel-tuner", cache, "--problem", "saxpy", "--out",
                          dir.filePath("a.jsonl").toStdString(), "--reference-ms", "1"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["device"].get<std::string>(), std::string("MI250X"));
        QCOMPARE(Recording::load(dir.filePath("a.jsonl").toStdString()).header.device.name, std::string("MI250X"));
        r = run_cli({"--json", "import", "--kernel-tuner", cache, "--problem", "saxpy", "--out",
                     dir.filePath("a.jsonl").toStdString(), "--reference-ms", "1", "--device-name", "AMD MI250X"});
        QCOMPARE(nlohmann::json::parse(r.out)["device"].get<std::string>(), std::string("AMD MI250X"));
    }

    void referenceTimeFromTheReferenceConfiguration() {
        // A T1-imported problem's reference is the family at the T1 defaults: with no "kerncast" header and no
        // --reference-ms, its time and samples are that configuration's entry in the cache.
        QTemporaryDir dir;
        const std::string problem = saxpy_with_reference_configuration(dir, R"({"BLOCK": 128, "VEC": 2, "ITEMS": 4})");
        const std::string folder = dir.filePath("kt").toStdString();
        fs::create_directories(folder);
        auto r = run_cli(
            {"--json", "import", "--kernel-tuner", kFailures, "--problem", problem, "--out", folder + "/saxpy.jsonl"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const auto j = nlohmann::json::parse(r.out);
        QCOMPARE(j["reference_ms"].get<double>(), 0.25);
        QVERIFY2(j["reference_from"].get<std::string>().find("BLOCK=128 VEC=2 ITEMS=4") != std::string::npos,
                 r.out.c_str());
        const Recording rec = Recording::load(folder + "/saxpy.jsonl");
        const RecordingEntry* ref = rec.find(content_hash(load_problem_folder(problem).reference.source, {}));
        QVERIFY(ref);
        QCOMPARE(ref->measurement.candidate->median_us, 250.0);
        QCOMPARE(ref->measurement.candidate->samples_us.size(), size_t(3));  // the entry's runs
        QCOMPARE(ref->measurement.compile_ms, 301.0);
        const Measurement m = replayed(folder, problem, saxpy_config(64, 1, 1));
        QVERIFY(std::abs(m.speedup - 0.25 / 0.631231) < 1e-12);
        // The same from T4 results.
        r = run_cli({"--json", "import", "--t4", kFailuresT4Gz, "--problem", problem, "--out", folder + "/t4.jsonl"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["reference_ms"].get<double>(), 0.25);
        // --reference-ms still wins.
        r = run_cli({"--json", "import", "--kernel-tuner", kFailures, "--problem", problem, "--out",
                     folder + "/saxpy.jsonl", "--reference-ms", "2"});
        QCOMPARE(nlohmann::json::parse(r.out)["reference_ms"].get<double>(), 2.0);
    }

    void referenceConfigurationErrors_data() {
        QTest::addColumn<QString>("configuration");
        QTest::addColumn<QString>("expected");
        QTest::newRow("failed") << R"({"BLOCK": 256, "VEC": 4, "ITEMS": 8})"
                                << "saxpy_failures_cache.json:37: the reference configuration (BLOCK=256 VEC=4 "
                                   "ITEMS=8, problem.json's reference_configuration) failed in the cache "
                                   "(CompilationFailedConfig): there is no reference time";
        QTest::newRow("not in the cache") << R"({"BLOCK": 64, "VEC": 2, "ITEMS": 2})"
                                          << "the cache has no entry for saxpy's reference configuration (BLOCK=64 "
                                             "VEC=2 ITEMS=2, problem.json's reference_configuration)";
        QTest::newRow("a tunable missing") << R"({"BLOCK": 64})"
                                           << "reference_configuration gives no value for "
                                              "tunable VEC";
        QTest::newRow("not a tunable") << R"({"BLOCK": 64, "VEC": 1, "ITEMS": 1, "TILE": 2})"
                                       << "reference_configuration names TILE, which the cache";
    }

    void referenceConfigurationErrors() {
        QFETCH(QString, configuration);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string problem = saxpy_with_reference_configuration(dir, configuration.toStdString());
        const auto r = run_cli({"import", "--kernel-tuner", kFailures, "--problem", problem, "--out",
                                dir.filePath("x.jsonl").toStdString()});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(expected.toStdString()) != std::string::npos, r.err.c_str());
        QVERIFY(!fs::exists(dir.filePath("x.jsonl").toStdString()));
    }

    void aConfigurationTheFamilyRulesOutNamesItsCondition() {
        // Hub caches were made under the same conditions as the family's: one that is not names the
        // configuration and the condition it fails.
        std::string text = read_file(kFailures);
        const std::string entry = R"("64,4,16": {"BLOCK": 64, "VEC": 4, "ITEMS": 16, "time": 0.5},)";
        text.insert(text.find("\"64,1,1\""), entry + "\n");
        QTemporaryDir dir;
        const std::string cache = dir.filePath("ruled_out.json").toStdString();
        std::ofstream(cache) << text;
        const auto r = run_cli({"import", "--kernel-tuner", cache, "--problem", "saxpy", "--out",
                                dir.filePath("x.jsonl").toStdString(), "--reference-ms", "1"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find(cache + ":35: configuration \"64,4,16\" (BLOCK=64 VEC=4 ITEMS=16) is not a valid "
                                    "configuration of ") != std::string::npos,
                 r.err.c_str());
        QVERIFY2(r.err.find("the condition `where VEC * ITEMS <= 32` of tunable ITEMS (") != std::string::npos,
                 r.err.c_str());
        QVERIFY2(r.err.find("family.cu:7) does not hold") != std::string::npos, r.err.c_str());
    }

    void exportWritesEveryKernelTunerField() {
        // Kernel Tuner's get_t4_results reads compile_time, benchmark_time, framework_time, strategy_time and
        // verification_time of each entry (KeyError: 'framework_time' without them); entries carry a timestamp.
        QTemporaryDir dir;
        const std::string cache = dir.filePath("saxpy.json").toStdString();
        const auto r =
            run_cli({"export", "--recording", saxpy_recording(), "--format", "kernel-tuner", "--out", cache});
        QVERIFY2(r.code == 0, r.err.c_str());
        const auto doc = nlohmann::json::parse(read_file(cache));
        QCOMPARE(doc["cache"].size(), size_t(70));
        for (const auto& [key, e] : doc["cache"].items()) {
            for (const char* field : {"time", "times", "compile_time", "verification_time", "benchmark_time",
                                      "strategy_time", "framework_time"})
                QVERIFY2(e.contains(field) && (e[field].is_number() || e[field].is_array()),
                         (key + " " + field).c_str());
            QVERIFY2(std::regex_match(e["timestamp"].get<std::string>(), kKernelTunerTimestamp), key.c_str());
        }
    }

    void t4ExportAndImportGiveBackTheRecording() {
        // A recording with failures -> T4 results and metadata -> import --t4: the same configurations, times and
        // failures, and the reference and device from Kerncast's own metadata.
        QTemporaryDir dir;
        const std::string folder = dir.filePath("h200").toStdString();
        fs::create_directories(folder);
        auto r = run_cli({"import", "--kernel-tuner", kFailures, "--problem", "saxpy", "--out", folder + "/saxpy.jsonl",
                          "--reference-ms", "1.5"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const std::string results = dir.filePath("saxpy-t4.json").toStdString();
        r = run_cli({"--json", "export", "--recording", folder + "/saxpy.jsonl", "--format", "t4", "--out", results});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        const std::string metadata = dir.filePath("saxpy-t4-metadata.json").toStdString();
        QCOMPARE(nlohmann::json::parse(r.out)["metadata_file"].get<std::string>(), metadata);

        const auto t4 = nlohmann::json::parse(read_file(results));
        QCOMPARE(t4["schema_version"].get<std::string>(), std::string("1.0.0"));
        QCOMPARE(t4["metadata"]["timeunit"].get<std::string>(), std::string("milliseconds"));
        QCOMPARE(t4["results"].size(), size_t(5));
        std::map<std::string, int> invalidity;
        for (const auto& res : t4["results"]) {
            for (const char* field :
                 {"timestamp", "configuration", "times", "invalidity", "correctness", "measurements", "objectives"})
                QVERIFY2(res.contains(field), field);
            for (const char* field : {"compilation", "benchmark", "framework", "search_algorithm", "validation"})
                QVERIFY2(res["times"][field].is_number(), field);
            QVERIFY(res["times"]["runtimes"].is_array());
            QVERIFY(std::regex_match(res["timestamp"].get<std::string>(), kKernelTunerTimestamp));
            QCOMPARE(res["configuration"].size(), size_t(3));
            ++invalidity[res["invalidity"].get<std::string>()];
        }
        QCOMPARE(invalidity, (std::map<std::string, int>{{"compile", 1}, {"correct", 3}, {"runtime", 1}}));
        const auto meta = nlohmann::json::parse(read_file(metadata));
        QCOMPARE(meta["schema_version"].get<std::string>(), std::string("1.0.0"));
        QCOMPARE(meta["metadata"]["hardware"]["hardware_description"][0]["product"].get<std::string>(),
                 std::string("NVIDIA H200"));

        const std::string back_folder = dir.filePath("back").toStdString();
        fs::create_directories(back_folder);
        r = run_cli({"--json", "import", "--t4", results, "--problem", "saxpy", "--out", back_folder + "/saxpy.jsonl"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        QCOMPARE(nlohmann::json::parse(r.out)["benchmark_from_runtimes"].get<int>(), 0);
        const Recording original = Recording::load(folder + "/saxpy.jsonl");
        const Recording back = Recording::load(back_folder + "/saxpy.jsonl");
        QCOMPARE(back.header.device.name, original.header.device.name);
        QCOMPARE(back.entries.size(), original.entries.size());
        for (const auto& e : original.entries) {
            const RecordingEntry* b = back.find(e.source_hash);
            QVERIFY2(b, e.label.c_str());
            QCOMPARE(b->label, e.label);
            const Measurement& m = e.measurement;
            const Measurement& n = b->measurement;
            QCOMPARE(n.status, m.status);
            QCOMPARE(n.compile_ms, m.compile_ms);
            QCOMPARE(n.verify_ms, m.verify_ms);
            QCOMPARE(n.time_ms, m.time_ms);
            QCOMPARE(bool(n.candidate), bool(m.candidate));
            if (m.candidate) {
                QCOMPARE(n.candidate->median_us, m.candidate->median_us);
                QCOMPARE(n.candidate->samples_us, m.candidate->samples_us);
                QCOMPARE(n.speedup, m.speedup);
            }
        }

        r = run_cli({"export", "--recording", folder + "/saxpy.jsonl", "--format", "t4"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("--format t4 writes two files") != std::string::npos, r.err.c_str());
    }

    void recordedRunsSummarizeAsTheGpuWorkerSummarizes() {
        // The import's faster summary gives stats::summarize's numbers to the last bit: runs with ties, one run,
        // odd and even counts, Kernel Tuner's 7 and 32 runs.
        uint64_t state = 12345;
        auto next = [&] {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
        };
        for (size_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 31, 32, 33, 64, 100})
            for (int round = 0; round < 5; ++round) {
                std::vector<double> us;
                for (size_t i = 0; i < n; ++i)
                    us.push_back(round % 2 ? std::floor(next() * 4) * 10 + 100 : 100 + next() * 5);  // ties: odd
                const TimingStats want = stats::summarize(us);
                const TimingStats got = summarize_recorded_runs(us);
                const std::string what = std::to_string(n) + " runs, round " + std::to_string(round);
                QVERIFY2(got.median_us == want.median_us && got.mean_us == want.mean_us && got.p10_us == want.p10_us &&
                             got.p90_us == want.p90_us && got.rel_std_error == want.rel_std_error && got.n == want.n &&
                             got.samples_us == want.samples_us && got.events_median_us == want.events_median_us,
                         what.c_str());
                QVERIFY2(got.ci_low_us == want.ci_low_us && got.ci_high_us == want.ci_high_us, what.c_str());
            }
    }

    void kernelTunersOwnCodeReadsAndSimulatesOurExport() {
        // Runs Kernel Tuner's cache reader (through tune_kernel's checks of kernel name, problem size and tunable
        // order) and its simulation runner on our export. Kernel Tuner is not a dependency: set
        // KERNCAST_KERNEL_TUNER_SRC and KERNCAST_PYTHON_CONSTRAINT_SRC to source checkouts to run this.
        const QString kt = qEnvironmentVariable("KERNCAST_KERNEL_TUNER_SRC");
        const QString pc = qEnvironmentVariable("KERNCAST_PYTHON_CONSTRAINT_SRC");
        if (kt.isEmpty() || pc.isEmpty())
            QSKIP("KERNCAST_KERNEL_TUNER_SRC and KERNCAST_PYTHON_CONSTRAINT_SRC are not set");
        QTemporaryDir dir;
        const std::string cache = dir.filePath("softmax.json").toStdString();
        auto r = run_cli({"export", "--recording", resources() + "/recordings/nvidia-h200/softmax.jsonl", "--format",
                          "kernel-tuner", "--out", cache});
        QVERIFY2(r.code == 0, r.err.c_str());
        QProcess py;
        py.start("/usr/bin/python3",
                 {QStringLiteral(KERNCAST_SOURCE_DIR "/tests/data/kernel_tuner/check_export.py"), kt, pc,
                  QString::fromStdString(cache), QString::fromStdString(resources() + "/problems/softmax")});
        QVERIFY(py.waitForFinished(300000));
        const QByteArray out = py.readAllStandardOutput();
        QVERIFY2(py.exitCode() == 0, (out + py.readAllStandardError()).constData());
        const auto j = nlohmann::json::parse(out.toStdString());
        const KernelTunerCache ours = load_kernel_tuner_cache(cache);
        QCOMPARE(j["read"].get<size_t>(), ours.entries.size());
        QCOMPARE(j["visited"].get<int>(), 20);
        // The best Kernel Tuner found is one of our configurations, with our time.
        std::vector<int64_t> values;
        for (const auto& k : ours.keys)
            values.push_back(j["best"][k].get<int64_t>());
        QVERIFY(ours.find(values));
        QCOMPARE(j["best"]["time"].get<double>(), *ours.find(values)->time_ms);
    }
};

QTEST_GUILESS_MAIN(TestKernelTunerInterop)
#include "tst_kernel_tuner_interop.moc"
