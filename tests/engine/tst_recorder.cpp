// What `kerncast-cli record` measures: the reference, every seed, and the family's configurations (all, or an even
// sample when a limit is given).
#include "core/error.h"
#include "core/kernel_program.h"
#include "engine/replay/recorder.h"
#include "engine/replay/replay_device.h"

#include <QTemporaryDir>

#include <fstream>
#include <sstream>

#include <QTest>

#include <set>

using namespace kerncast;

namespace {
const std::string kFixture = KERNCAST_TEST_DATA "/problems/saxpy_fixture";
const std::string kData = KERNCAST_TEST_DATA;

// Stands in for a GPU in the recorder's file handling: it answers from the fixture recording, as the H100 that
// made it did, but it is not the replay device (which record refuses).
class RecordedGpu : public Device {
public:
    RecordedGpu() : m_replay(kData + "/recordings/test-h100") {}
    std::string id() const override { return "cuda:0"; }
    DeviceFingerprint fingerprint() const override {
        DeviceFingerprint f = m_replay.fingerprint();
        if (!uuid.empty())
            f.uuid = uuid;
        if (sm_count > 0)
            f.sm_count = sm_count;
        f.power_limit_mw = power_limit_mw;
        return f;
    }
    std::string uuid;        // another GPU of the same model, where set
    int sm_count = 0;        // of another model under the same name (a cut-down part), where set
    int power_limit_mw = 0;  // the board power limit in force; 0: not known (no NVML)
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress) override {
        MeasureOutcome out = m_replay.measure(request, progress);
        out.measurement.device = fingerprint();  // as a GPU names itself in what it measures
        return out;
    }

private:
    ReplayDevice m_replay;
};

std::string readText(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

class TestRecorder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void planStartsWithTheReferenceThenTheSeeds() {
        const auto plan = recording_plan(kFixture, 0);
        QVERIFY(plan.size() > 3);
        QCOMPARE(plan.front().label, std::string("reference"));
        QVERIFY(plan[1].label.rfind("seed:", 0) == 0);
        QVERIFY(plan[2].label.rfind("seed:", 0) == 0);
        QVERIFY(plan[3].label.rfind("family", 0) == 0);
    }

    void noLimitMeansEveryValidConfiguration() {
        const auto family = KernelProgram::load(kFixture + "/family.cu");
        const auto configs = family.configurations();
        const auto plan = recording_plan(kFixture, 0);
        size_t family_items = 0;
        for (const auto& item : plan)
            family_items += item.label.rfind("family", 0) == 0;
        QCOMPARE(family_items, configs.size());
    }

    void aLimitSamplesEvenlyFromFirstToLast_data() {
        QTest::addColumn<int>("limit");
        QTest::newRow("two") << 2;
        QTest::newRow("five") << 5;
        QTest::newRow("more than there are") << 1000;
    }
    void aLimitSamplesEvenlyFromFirstToLast() {
        QFETCH(int, limit);
        const auto configs = KernelProgram::load(kFixture + "/family.cu").configurations();
        const auto plan = recording_plan(kFixture, static_cast<size_t>(limit));
        std::vector<std::map<std::string, int64_t>> sampled;
        for (const auto& item : plan)
            if (item.label.rfind("family", 0) == 0)
                sampled.push_back(item.program.tunables);
        QCOMPARE(sampled.size(), std::min(configs.size(), static_cast<size_t>(limit)));
        // The corners of the space are always in, and no configuration twice.
        QCOMPARE(sampled.front(), configs.front());
        QVERIFY(std::find(sampled.begin(), sampled.end(), configs.back()) != sampled.end());
        std::set<std::map<std::string, int64_t>> unique(sampled.begin(), sampled.end());
        QCOMPARE(unique.size(), sampled.size());
    }

    // The family is recorded in an order whose every prefix is spread over the space: with 16 configurations the
    // first 2^j are evenly spaced (every 16 / 2^j-th), with 6 the order is still a permutation whose first two lie in
    // different halves; and the plan follows it.
    void aRecordingStoppedEarlyIsASampleOfTheSpace() {
        const std::vector<size_t> order = spread_order(16);
        QCOMPARE(order.size(), size_t{16});
        QCOMPARE(std::set<size_t>(order.begin(), order.end()).size(), size_t{16});
        for (size_t prefix : {1, 2, 4, 8, 16}) {
            std::set<size_t> first(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(prefix));
            for (size_t k = 0; k < prefix; ++k)
                QVERIFY2(first.count(k * 16 / prefix), (std::to_string(prefix) + " " + std::to_string(k)).c_str());
        }
        const std::vector<size_t> six = spread_order(6);
        QCOMPARE(std::set<size_t>(six.begin(), six.end()), (std::set<size_t>{0, 1, 2, 3, 4, 5}));
        QVERIFY(six[0] < 3 && six[1] >= 3);

        const auto configs = KernelProgram::load(kFixture + "/family.cu").configurations();
        const std::vector<size_t> expected = spread_order(configs.size());
        size_t k = 0;
        for (const auto& item : recording_plan(kFixture, 0))
            if (item.label.rfind("family", 0) == 0)
                QCOMPARE(item.program.tunables, configs[expected[k++]]);
        QCOMPARE(k, configs.size());
    }

    void recordThenResume() {
        QTemporaryDir dir;
        RecordedGpu gpu;
        RecordOptions options;
        options.out_dir = dir.path().toStdString();
        options.pytorch_eager_us = 71.4;
        const std::string problem = kData + "/problems/replay_saxpy";
        RecordSummary s = record_problem(gpu, problem, options, {});
        QCOMPARE(s.measured, size_t{6});  // reference, 1 seed, 4 family configurations
        QCOMPARE(s.failed, size_t{1});    // the one recorded as incorrect
        const std::string file = options.out_dir + "/nvidia-h100-80gb-hbm3/replay_saxpy.jsonl";
        QCOMPARE(s.file, file);

        // What was recorded replays to the same measurements as the original recording, for the same definition.
        const auto copy = Recording::load(file);
        const auto original = Recording::load(kData + "/recordings/test-h100/replay_saxpy.jsonl");
        QCOMPARE(copy.header.problem_fingerprint, original.header.problem_fingerprint);
        QCOMPARE(copy.entries.size(), original.entries.size());
        for (const auto& e : original.entries) {
            const auto* c = copy.find(e.source_hash);
            QVERIFY(c);
            QCOMPARE(c->label, e.label);
            QVERIFY(nlohmann::json(c->measurement)["candidate"] == nlohmann::json(e.measurement)["candidate"]);
        }
        QCOMPARE(*copy.header.pytorch_eager_us, 71.4);

        // A second run resumes: nothing is measured twice.
        s = record_problem(gpu, problem, options, {});
        QCOMPARE(s.measured, size_t{0});
        QCOMPARE(s.skipped, size_t{6});

        // Cut the file in the middle of its last line, as a kill during a write would: only that line is redone.
        const std::string text = readText(file);
        std::ofstream(file, std::ios::trunc) << text.substr(0, text.size() - 40);
        s = record_problem(gpu, problem, options, {});
        QCOMPARE(s.measured, size_t{1});
        QCOMPARE(s.skipped, size_t{5});
        QCOMPARE(Recording::load(file).entries.size(), size_t{6});
    }

    // A recording started on another GPU of the same model goes on only when asked (several short leases), and keeps
    // the header it was started with; one of another GPU model never does.
    void resumeOnAnotherGpuOfTheSameModel() {
        QTemporaryDir dir;
        RecordOptions options;
        options.out_dir = dir.path().toStdString();
        options.limit = 2;
        const std::string problem = kData + "/problems/replay_saxpy";
        RecordedGpu first;
        RecordSummary s = record_problem(first, problem, options, {});
        QCOMPARE(s.measured, size_t{4});  // reference, seed, 2 of the 4 family configurations
        const std::string file = s.file;
        const std::string header = readText(file).substr(0, readText(file).find('\n'));

        RecordedGpu second;
        second.uuid = "GPU-00000000-another";
        options.limit = 0;
        try {
            record_problem(second, problem, options, {});
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("--continue-on-another-gpu") != std::string::npos, e.what());
        }
        QCOMPARE(Recording::load(file).entries.size(), size_t{4});

        RecordedGpu other_model;
        other_model.uuid = "GPU-00000000-other";
        other_model.sm_count = 114;
        options.continue_on_another_gpu = true;
        try {
            record_problem(other_model, problem, options, {});
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("another GPU model") != std::string::npos, e.what());
        }

        s = record_problem(second, problem, options, {});
        QCOMPARE(s.skipped, size_t{4});
        QCOMPARE(s.measured, size_t{2});
        const std::string text = readText(file);
        QCOMPARE(text.substr(0, text.find('\n')), header);  // the GPU it was started on
        QCOMPARE(Recording::load(file).entries.size(), size_t{6});
    }

    // A recording goes on only under the power limit it was started with, on its own GPU (capped between two leases)
    // or another of the model; a recording whose header does not know its limit goes on as before.
    void resumeRefusesAnotherPowerLimit() {
        QTemporaryDir dir;
        RecordOptions options;
        options.out_dir = dir.path().toStdString();
        options.limit = 2;
        options.continue_on_another_gpu = true;
        const std::string problem = kData + "/problems/replay_saxpy";
        RecordedGpu first;
        first.power_limit_mw = 700000;
        RecordSummary s = record_problem(first, problem, options, {});
        QCOMPARE(s.measured, size_t{4});
        const std::string file = s.file;
        const std::string recorded = readText(file);
        QCOMPARE(Recording::load(file).header.device.power_limit_mw, 700000);
        options.limit = 0;

        const auto refused = [&](RecordedGpu& gpu, const std::string& expected) {
            try {
                record_problem(gpu, problem, options, {});
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find(expected) != std::string::npos, e.what());
                QCOMPARE(readText(file), recorded);  // nothing appended
                return;
            }
            QFAIL("expected an error");
        };
        first.power_limit_mw = 500000;  // the same GPU, capped since
        refused(first, "power limit at 700 W, this GPU's is 500 W");
        RecordedGpu second;
        second.uuid = "GPU-00000000-another";
        second.power_limit_mw = 450000;
        refused(second, "power limit at 700 W, this GPU's is 450 W");
        second.power_limit_mw = 699800;  // differs by less than a watt
        refused(second, "power limit at 700 W, this GPU's is 699.8 W");
        second.power_limit_mw = 0;  // cannot tell its own
        refused(second, "does not report");

        second.power_limit_mw = 700000;
        s = record_problem(second, problem, options, {});
        QCOMPARE(s.measured, size_t{2});
        QCOMPARE(Recording::load(file).entries.back().measurement.device.power_limit_mw, 700000);

        // A header without a limit (recorded before headers carried one) compares with nothing.
        QTemporaryDir older;
        options.out_dir = older.path().toStdString();
        options.limit = 2;
        RecordedGpu unknown;
        s = record_problem(unknown, problem, options, {});
        QVERIFY(readText(s.file).find("power_limit_mw") == std::string::npos);
        options.limit = 0;
        unknown.power_limit_mw = 500000;
        s = record_problem(unknown, problem, options, {});
        QCOMPARE(s.measured, size_t{2});
    }

    // A recording of another definition of the problem is not continued: its measurements would not apply.
    void resumeRefusesAnotherDefinition() {
        QTemporaryDir dir;
        RecordedGpu gpu;
        RecordOptions options;
        options.out_dir = dir.path().toStdString();
        QDir().mkpath(dir.filePath("nvidia-h100-80gb-hbm3"));
        std::string text = readText(kData + "/recordings/test-h100/replay_saxpy.jsonl");
        const auto at = text.find("\"problem_fingerprint\":\"") + 23;
        text.replace(at, 4, "0000");
        const std::string file = options.out_dir + "/nvidia-h100-80gb-hbm3/replay_saxpy.jsonl";
        std::ofstream(file) << text;
        try {
            record_problem(gpu, kData + "/problems/replay_saxpy", options, {});
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("measured another definition") != std::string::npos, e.what());
        }
        QCOMPARE(readText(file), text);
    }

    // Recording on the replay device would write a file of not_recorded entries: it is refused, and nothing is
    // written.
    void recordRefusesTheReplayDevice() {
        QTemporaryDir out;
        ReplayDevice replay(KERNCAST_TEST_DATA "/recordings/test-h100");
        RecordOptions options;
        options.out_dir = out.path().toStdString();
        try {
            record_problem(replay, KERNCAST_TEST_DATA "/problems/replay_saxpy", options, {});
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("replay:test-h100 only answers from recordings") != std::string::npos,
                     e.what());
        }
        QVERIFY(QDir(out.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestRecorder)
#include "tst_recorder.moc"
