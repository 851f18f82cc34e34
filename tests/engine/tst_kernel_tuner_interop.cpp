// Kernel Tuner caches both ways: a recording exported as Kernel Tuner itself writes it, a Kernel Tuner cache imported
// as a recording the replay device answers from, and (when its source is at hand) Kernel Tuner's own reader and
// simulation runner on our export.
#include "tests/support/cli_runner.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_tuner_cache.h"
#include "core/problem_library.h"
#include "engine/cli/cli.h"
#include "engine/replay/kernel_tuner_interop.h"
#include "engine/replay/replay_device.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace kerncast;
using kerncast::test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kKernelTunerWrote = KERNCAST_TEST_DATA "/kernel_tuner/saxpy_h200_cache.json";

std::string resources() { return cli::resources_dir(); }
std::string saxpy_recording() { return resources() + "/recordings/nvidia-h200/saxpy.jsonl"; }

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
        for (const auto& e : fromRun.entries)
            QCOMPARE(*e.time_ms, *all.find(e.values)->time_ms);

        r = run_cli({"import", "--kernel-tuner", kKernelTunerWrote, "--problem", "saxpy"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("--out") != std::string::npos, r.err.c_str());
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
