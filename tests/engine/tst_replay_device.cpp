// The replay device against the fixture recording tests/data/recordings/test-h100/replay_saxpy.jsonl, which was
// made for the problem in tests/data/problems/replay_saxpy.
#include "core/candidate.h"
#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "engine/device.h"
#include "engine/replay/replay_device.h"
#include "engine/surrogate/forecast_query.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace kerncast;

namespace {

const std::string kData = KERNCAST_TEST_DATA;
const std::string kFolder = kData + "/recordings/test-h100";
const std::string kProblem = kData + "/problems/replay_saxpy";

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

MeasureRequest request(const std::string& file, std::map<std::string, int64_t> tunables = {}) {
    MeasureRequest r;
    r.problem_dir = kProblem;
    r.candidate.source = read(kProblem + "/" + file);
    r.candidate.file_name = file;
    r.candidate.tunables = std::move(tunables);
    r.reference.source = read(kProblem + "/reference.cu");
    return r;
}

void write(const QString& path, const std::string& text) { std::ofstream(path.toStdString()) << text; }

}  // namespace

class TestReplayDevice : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void identity() {
        ReplayDevice d(kFolder);
        QCOMPARE(d.id(), std::string("replay:test-h100"));
        QCOMPARE(d.fingerprint().name, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(d.header().ceilings.dram_gbps, 3010.5);
        QVERIFY(d.header().pytorch_eager_us.has_value());
        QCOMPARE(*d.header().pytorch_eager_us, 71.4);
        QCOMPARE(d.problems(), std::vector<std::string>{"replay_saxpy"});
    }

    void recordedProgramsGiveTheRecordedMeasurement_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("block");
        QTest::addColumn<int>("items");
        QTest::addColumn<QString>("status");
        QTest::addColumn<double>("median");
        QTest::newRow("reference") << "reference.cu" << 0 << 0 << "ok" << 70.0;
        QTest::newRow("seed") << "seeds/grid_stride.cu" << 0 << 0 << "ok" << 66.5;
        QTest::newRow("family 128x4") << "family.cu" << 128 << 4 << "ok" << 64.8;
        QTest::newRow("family 256x4 incorrect") << "family.cu" << 256 << 4 << "incorrect" << 0.0;
    }
    void recordedProgramsGiveTheRecordedMeasurement() {
        QFETCH(QString, file);
        QFETCH(int, block);
        QFETCH(int, items);
        QFETCH(QString, status);
        QFETCH(double, median);
        std::map<std::string, int64_t> tunables;
        if (block)
            tunables = {{"BLOCK", block}, {"ITEMS", items}};
        ReplayDevice d(kFolder);
        std::vector<std::string> stages;
        const auto out =
            d.measure(request(file.toStdString(), tunables), [&](const std::string& s) { stages.push_back(s); });
        const auto& m = out.measurement;
        QCOMPARE(QString(to_string(m.status)), status);
        QCOMPARE(m.device_kind, std::string("replay"));
        QCOMPARE(m.device.name, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(stages.back(), std::string("done"));
        if (median > 0) {
            QVERIFY(m.candidate.has_value());
            QCOMPARE(m.candidate->median_us, median);
            QCOMPARE(m.reference->median_us, 70.0);
            QVERIFY(std::abs(m.speedup - 70.0 / median) < 1e-5);
            QCOMPARE(m.candidate->samples_us.size(), size_t{5});
            QVERIFY(!out.static_report.empty());
            QVERIFY(out.static_report.front().registers > 0);
        } else {
            QVERIFY(!m.candidate.has_value());
            QVERIFY(m.reason.find("NaN") != std::string::npos);
        }
    }

    // What the replay device offers beyond measuring, asked through the Device interface (no cast to the class).
    void capabilitiesThroughTheInterface() {
        ReplayDevice replay(kFolder);
        const Device& d = replay;
        QCOMPARE(d.recordingsFolder(), kFolder);
        QCOMPARE(d.ceilings().dram_gbps, replay.header().ceilings.dram_gbps);
        const auto r = request("reference.cu");
        const std::string hash = content_hash(r.candidate.source, {});
        const auto recorded = d.recordedStaticReport("replay_saxpy", hash);
        QVERIFY(recorded.has_value());
        QCOMPARE(recorded->size(), replay.measure(r).static_report.size());
        QVERIFY(!d.recordedStaticReport("replay_saxpy", "0000").has_value());
        QVERIFY(!d.recordedStaticReport("no_such_problem", hash).has_value());
        // Prepared and measured later: the same answer as measuring at once.
        const auto prepared = replay.prepareMeasure(r);
        QCOMPARE(prepared().measurement.speedup, replay.measure(r).measurement.speedup);
        // Its recordings (the header holds PyTorch eager's time) and no batch pool.
        QVERIFY(d.recording("replay_saxpy"));
        QCOMPARE(d.recording("replay_saxpy")->header.pytorch_eager_us, replay.header().pytorch_eager_us);
        QVERIFY(!d.recording("no_such_problem"));
        QVERIFY(!replay.batchPool());

        // A device without those capabilities answers with the defaults.
        struct Bare : Device {
            std::string id() const override { return "bare"; }
            DeviceFingerprint fingerprint() const override { return {}; }
            MeasureOutcome measure(const MeasureRequest&, const ProgressFn&) override {
                MeasureOutcome o;
                o.measurement.speedup = 2.5;
                return o;
            }
        } bare;
        QCOMPARE(bare.recordingsFolder(), std::string());
        QCOMPARE(bare.ceilings().dram_gbps, 0.0);
        QVERIFY(!bare.recordedStaticReport("replay_saxpy", hash).has_value());
        QCOMPARE(bare.prepareMeasure(r)().measurement.speedup, 2.5);
        QVERIFY(!bare.recording("replay_saxpy"));
        QVERIFY(!bare.batchPool());
    }

    void unknownProgramIsNotRecorded_data() {
        QTest::addColumn<QString>("edit");
        QTest::newRow("edited source") << "source";
        QTest::newRow("unrecorded configuration") << "tunables";
    }
    void unknownProgramIsNotRecorded() {
        QFETCH(QString, edit);
        ReplayDevice d(kFolder);
        auto req = request("family.cu", {{"BLOCK", 128}, {"ITEMS", 1}});
        if (edit == "source")
            req.candidate.source += "\n// one more line\n";
        else
            req.candidate.tunables["BLOCK"] = 512;
        const auto m = d.measure(req).measurement;
        QCOMPARE(m.status, Status::NotRecorded);
        QVERIFY(m.reason.find("not recorded") != std::string::npos);
        QVERIFY(m.reason.find(content_hash(req.candidate.source, req.candidate.tunables)) != std::string::npos);
        QVERIFY(!m.candidate.has_value());
        QCOMPARE(m.speedup, 0.0);
    }

    void problemWithoutRecordingIsNotRecorded() {
        QTemporaryDir dir;
        write(dir.filePath("problem.json"), R"({"name":"never_recorded"})");
        ReplayDevice d(kFolder);
        auto req = request("reference.cu");
        req.problem_dir = dir.path().toStdString();
        const auto m = d.measure(req).measurement;
        QCOMPARE(m.status, Status::NotRecorded);
        QVERIFY(m.reason.find("never_recorded") != std::string::npos);
    }

    // The recording holds the fingerprint of the problem definition it measured: an edited problem (sizes,
    // tolerance, reference) is not the recorded one and gets no numbers; prose does not count.
    void definitionChangeIsNotRecorded_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<bool>("replays");
        QTest::newRow("benchmark size") << R"({"N": 16777216})"
                                        << R"({"N": 1000000000000})" << false;
        QTest::newRow("tolerance") << R"("rtol": 1e-5)"
                                   << R"("rtol": 1e-3)" << false;
        QTest::newRow("buffer role") << R"("role": "inout")"
                                     << R"("role": "out")" << false;
        QTest::newRow("reference") << "reference.cu"
                                   << "reference.cu" << false;
        QTest::newRow("description") << "the problem the replay fixture recording was made for"
                                     << "reworded" << true;
        QTest::newRow("kernelbench counterpart named")
            << R"("reference": "reference.cu")"
            << R"("reference": "reference.cu", "kernelbench": "level1/5_Matrix_scalar_multiplication.py")" << true;
        QTest::newRow("unchanged") << ""
                                   << "" << true;
    }
    void definitionChangeIsNotRecorded() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(bool, replays);
        QTemporaryDir dir;
        std::string json = read(kProblem + "/problem.json");
        std::string reference = read(kProblem + "/reference.cu");
        if (from == "reference.cu")
            reference += "// edited\n";
        else if (!from.isEmpty()) {
            const auto at = json.find(from.toStdString());
            QVERIFY(at != std::string::npos);
            json.replace(at, from.size(), to.toStdString());
        }
        write(dir.filePath("problem.json"), json);
        write(dir.filePath("reference.cu"), reference);
        ReplayDevice d(kFolder);
        auto req = request("family.cu", {{"BLOCK", 256}, {"ITEMS", 1}});
        req.problem_dir = dir.path().toStdString();
        const auto m = d.measure(req).measurement;
        if (replays) {
            QCOMPARE(m.status, Status::Ok);
            return;
        }
        QCOMPARE(m.status, Status::NotRecorded);
        QVERIFY2(m.reason.find("is not the one recorded") != std::string::npos, m.reason.c_str());
        QVERIFY2(m.reason.find("fingerprint") != std::string::npos, m.reason.c_str());
        QCOMPARE(m.speedup, 0.0);
    }

    // Every shipped recording replays for the shipped problem it was made for: its fingerprint is the problem
    // folder's as it is now (an edit to a problem without recording it again would silence its recordings).
    void shippedRecordingsMatchTheirProblems() {
        const std::string root = std::string(KERNCAST_SOURCE_DIR) + "/resources";
        int checked = 0;
        const QDir recordings(QString::fromStdString(root + "/recordings"));
        for (const auto& device : recordings.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            ReplayDevice d(root + "/recordings/" + device.toStdString());
            for (const auto& problem : d.problems()) {
                const std::string folder = root + "/problems/" + problem;
                const std::string recorded = d.recording(problem)->header.problem_fingerprint;
                QVERIFY2(recorded == problem_fingerprint(folder),
                         (device.toStdString() + "/" + problem + ": recorded for another definition").c_str());
                ++checked;
            }
        }
        QVERIFY(checked >= 66);  // 33 problems on two devices
    }

    // A recording made before headers carried the fingerprint answers nothing: nobody can tell what it measured.
    void recordingWithoutFingerprintIsNotRecorded() {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("gpu"));
        std::string text = read(kFolder + "/replay_saxpy.jsonl");
        const auto at = text.find(",\"problem_fingerprint\":\"");
        QVERIFY(at != std::string::npos && at < text.find('\n'));
        text.erase(at, text.find('"', text.find(':', at) + 2) + 1 - at);
        write(dir.filePath("gpu/replay_saxpy.jsonl"), text);
        ReplayDevice d(dir.filePath("gpu").toStdString());
        QVERIFY(d.header().problem_fingerprint.empty());
        const auto m = d.measure(request("reference.cu")).measurement;
        QCOMPARE(m.status, Status::NotRecorded);
        QVERIFY2(m.reason.find("no problem_fingerprint") != std::string::npos, m.reason.c_str());
    }

    void deterministic() {
        ReplayDevice a(kFolder), b(kFolder);
        const auto req = request("family.cu", {{"BLOCK", 256}, {"ITEMS", 1}});
        const nlohmann::json first = a.measure(req).measurement;
        for (int i = 0; i < 3; ++i) {
            QVERIFY(nlohmann::json(a.measure(req).measurement) == first);
            QVERIFY(nlohmann::json(b.measure(req).measurement) == first);
        }
    }

    void malformedLineNamesFileAndLine_data() {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << "{\"kind\":\"measurement\", oops"
                                  << "not a JSON object";
        QTest::newRow("no hash") << R"({"kind":"measurement","measurement":{"status":"ok"}})"
                                 << "source_hash";
        QTest::newRow("bad status") << R"({"kind":"measurement","source_hash":"ab","measurement":{"status":"fast"}})"
                                    << "fast";
        QTest::newRow("wrong kind") << R"({"kind":"header","problem":"replay_saxpy"})"
                                    << "kind";
    }
    void malformedLineNamesFileAndLine() {
        QFETCH(QString, line);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("gpu"));
        std::string text = read(kFolder + "/replay_saxpy.jsonl");
        // Insert the bad line as line 3.
        const auto second_end = text.find('\n', text.find('\n') + 1);
        text.insert(second_end + 1, line.toStdString() + "\n");
        const QString file = dir.filePath("gpu/replay_saxpy.jsonl");
        write(file, text);
        ReplayDevice d(dir.filePath("gpu").toStdString());
        try {
            d.measure(request("reference.cu"));
            QFAIL("expected an error");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(file.toStdString() + ":3: ") == 0, e.what());
            QVERIFY2(what.find(expected.toStdString()) != std::string::npos, e.what());
            QCOMPARE(e.where().line, 3);
        }
    }

    void missingHeaderIsAnError() {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("gpu"));
        write(dir.filePath("gpu/replay_saxpy.jsonl"), "{\"kind\":\"measurement\",\"source_hash\":\"x\"}\n");
        QVERIFY_THROWS_EXCEPTION(Error, ReplayDevice(dir.filePath("gpu").toStdString()));
    }

    void emptyFolderIsAnError() {
        QTemporaryDir dir;
        try {
            ReplayDevice d(dir.path().toStdString());
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("no <problem>.jsonl") != std::string::npos);
        }
    }

    void laterLineReplacesEarlier() {
        std::string text = read(kFolder + "/replay_saxpy.jsonl");
        auto rec = Recording::parse(text, "r.jsonl");
        const auto hash = rec.entries.front().source_hash;
        RecordingEntry again = rec.entries.front();
        again.measurement.status = Status::Suspect;
        text += recording_entry_json(again).dump() + "\n";
        rec = Recording::parse(text, "r.jsonl");
        QCOMPARE(rec.find(hash)->measurement.status, Status::Suspect);
        QCOMPARE(rec.entries.size(), size_t{6});
    }

    // Which recordings a surrogate learns from when none is named, and the order replay devices are listed in:
    // the GPU's own model, else the embedded default, else the first by name.
    void recordingFolderChoice() {
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString();
        QCOMPARE(default_recordings_folder(root), std::string());
        const QDir recordings(dir.filePath(QStringLiteral("recordings")));
        for (const char* name : {"aaa-gpu", kDefaultRecordings, "zzz-gpu"}) {
            QVERIFY(recordings.mkpath(QString::fromUtf8(name)));
            write(recordings.filePath(QString::fromUtf8(name) + QStringLiteral("/replay_saxpy.jsonl")),
                  read(kFolder + "/replay_saxpy.jsonl"));
        }
        const std::string base = root + "/recordings/";
        QCOMPARE(default_recordings_folder(root), base + kDefaultRecordings);
        QCOMPARE(default_recordings_folder(root, "zzz-gpu"), base + "zzz-gpu");
        QCOMPARE(default_recordings_folder(root, "no-such-gpu"), base + kDefaultRecordings);

        std::vector<std::string> replays;
        for (const DeviceListing& l : list_devices(root))
            if (l.kind == "replay")
                replays.push_back(l.id);
        QCOMPARE(replays, (std::vector<std::string>{std::string("replay:") + kDefaultRecordings, "replay:aaa-gpu",
                                                    "replay:zzz-gpu"}));

        QVERIFY(QDir(recordings.filePath(QString::fromUtf8(kDefaultRecordings))).removeRecursively());
        QCOMPARE(default_recordings_folder(root), base + "aaa-gpu");
    }
};

QTEST_GUILESS_MAIN(TestReplayDevice)
#include "tst_replay_device.moc"
