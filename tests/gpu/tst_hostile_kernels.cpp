// Kernels that try to break the measurement: each must end in a clear status, and the worker (restarted by the
// supervisor where needed) must measure an ordinary kernel correctly right after.
#include "core/measurement.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/gpu_session.h"
#include "engine/worker/worker_protocol.h"
#include "engine/worker/worker_supervisor.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <memory>

using namespace kerncast;

class TestHostileKernels : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<Compiler> m_compiler;
    std::unique_ptr<WorkerSupervisor> m_worker;
    std::string m_arch;
    QString m_problemDir = QStringLiteral(KERNCAST_TEST_DATA "/problems_gpu/saxpy_out");

    static std::string readFile(const QString& path) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot read %s", qPrintable(path));
        return f.readAll().toStdString();
    }
    // "SKIP=1,TRUST=0" -> {SKIP: 1, TRUST: 0}
    static std::map<std::string, int64_t> parseTunables(const QString& text) {
        std::map<std::string, int64_t> out;
        for (const QString& item : text.split(u',', Qt::SkipEmptyParts)) {
            const QStringList kv = item.split(u'=');
            out[kv.value(0).toStdString()] = kv.value(1).toLongLong();
        }
        return out;
    }
    ProgramPayload program(const QString& path, const std::string& file, const QString& tunables = {}) {
        ProgramPayload p;
        p.source = readFile(path);
        p.file = file;
        p.tunables = parseTunables(tunables);
        CompileRequest req;
        req.source = p.source;
        req.file_name = file;
        req.defines = p.tunables;
        req.arch = m_arch;
        const CompileResult r = m_compiler->compile(req);
        if (!r.ok)
            qWarning("compiling %s failed:\n%s", file.c_str(), r.log.c_str());
        p.cubin = r.cubin;
        return p;
    }
    MeasurePayload payload(const QString& candidatePath, const QString& tunables = {}, QString problemDir = {}) {
        if (problemDir.isEmpty())
            problemDir = m_problemDir;
        MeasurePayload p;
        p.problem_file = (problemDir + "/problem.json").toStdString();
        p.problem_json = readFile(problemDir + "/problem.json");
        p.reference = program(problemDir + "/reference.cu", "reference.cu");
        p.candidate = candidatePath.isEmpty()
                          ? p.reference
                          : program(candidatePath, QFileInfo(candidatePath).fileName().toStdString(), tunables);
        // Enough to exercise every stage without spending long on timing precision.
        p.options.seeds = 3;
        p.options.warmup = 2;
        p.options.max_runs = 20;
        p.options.time_cap_ms = 1000;
        return p;
    }

    // The reference's loss at the benchmark case on the inputs of seed 1, as the bits of the float: what a kernel
    // could carry for a fixed, public seed.
    static qint64 publicSeedAnswer(const QString& problemDir) {
        const Problem problem = Problem::load(problemDir.toStdString());
        const std::string source = readFile(QString::fromStdString(problem.referencePath()));
        const KernelProgram program = KernelProgram::parse(source, "reference.cu");
        GpuSession session(0);
        CompileRequest req;
        req.source = source;
        req.file_name = "reference.cu";
        req.arch =
            "sm_" + std::to_string(session.fingerprint().cc_major) + std::to_string(session.fingerprint().cc_minor);
        const CompileResult compiled = Compiler().compile(req);
        if (!compiled.ok)
            qFatal("the reference does not compile: %s", compiled.log.c_str());
        const RunOutput out = session.runOnce(problem, program, compiled.cubin, problem.benchmark, {}, 1);
        const float loss = static_cast<float>(out.buffers.at("loss").at(0));
        uint32_t bits = 0;
        std::memcpy(&bits, &loss, 4);
        return bits;
    }

private Q_SLOTS:
    void initTestCase() {
        std::string why;
        const auto devices = cuda::discover_devices(&why);
        if (devices.empty())
            QSKIP(("no CUDA device: " + why).c_str());
        m_arch = "sm_" + std::to_string(devices[0].cc_major) + std::to_string(devices[0].cc_minor);
        m_compiler = std::make_unique<Compiler>();
        QString exe = qEnvironmentVariable("KERNCAST_WORKER");
        if (exe.isEmpty())
            exe = QStringLiteral(KERNCAST_BINARY_DIR "/app/kerncast-worker");
        m_worker = std::make_unique<WorkerSupervisor>(exe.toStdString(), 0);
        const HelloReply hello = m_worker->start();
        QVERIFY2(hello.ok, hello.error.c_str());
    }

    void hostile_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("reason");  // a fragment the reason must contain
        QTest::addColumn<double>("deadline");
        QTest::addColumn<bool>("restarts");  // the worker must have been replaced
        QTest::addColumn<QString>("tunables");
        QTest::newRow("out-of-bounds write") << "oob_write.cu"
                                             << "crashed"
                                             << "CUDA_ERROR_ILLEGAL_ADDRESS" << 120.0 << true << QString();
        QTest::newRow("trap") << "traps.cu"
                              << "crashed"
                              << "CUDA_ERROR_" << 120.0 << true << QString();
        QTest::newRow("never terminates") << "never_ends.cu"
                                          << "timeout"
                                          << "" << 15.0 << true << QString();
        QTest::newRow("writes part of the output") << "partial_write.cu"
                                                   << "incorrect"
                                                   << "not written" << 120.0 << false << QString();
        QTest::newRow("writes NaN") << "writes_nan.cu"
                                    << "incorrect"
                                    << "not finite" << 120.0 << false << QString();
        QTest::newRow("writes a constant") << "constant.cu"
                                           << "incorrect"
                                           << "is constant" << 120.0 << false << QString();
        QTest::newRow("modifies an input") << "modifies_input.cu"
                                           << "incorrect"
                                           << "input x was modified" << 120.0 << false << QString();
        // Its later calls return at once: the first timed launch after finds its poisoned output untouched.
        QTest::newRow("caches its result") << "caches_result.cu"
                                           << "incorrect"
                                           << "the candidate's timed launch" << 120.0 << false << QString();
        QTest::newRow("too much shared memory") << "too_much_smem.cu"
                                                << "launch_error"
                                                << "bytes of dynamic shared memory" << 120.0 << false << QString();
        QTest::newRow("printf flood") << "printf_flood.cu"
                                      << "ok"
                                      << "" << 120.0 << false << QString();
        QTest::newRow("writes past the end of its output")
            << "writes_past_end.cu"
            << "incorrect"
            << "wrote past the end of z: 64 of the 4096 bytes" << 120.0 << false << QString();
        // Skipping work when the output is believed to hold the answer already: every run has fresh inputs and
        // poisoned outputs, so the cheat never trusts anything and does the work (ok at its honest speed), and
        // every timed launch is checked.
        const char* skips[] = {"all of its work", "one block in ten", "one block"};
        const char* trusts[] = {"its own previous launch", "the previous launch on the same inputs"};
        for (int skip = 0; skip < 3; ++skip)
            for (int trust = 0; trust < 2; ++trust)
                QTest::addRow("skips %s, trusting %s", skips[skip], trusts[trust])
                    << "stale_output.cu"
                    << "ok|incorrect"
                    << "" << 120.0 << false << QStringLiteral("SKIP=%1,TRUST=%2").arg(skip).arg(trust);
    }
    void hostile() {
        QFETCH(QString, file);
        QFETCH(QString, status);
        QFETCH(QString, reason);
        QFETCH(double, deadline);
        QFETCH(bool, restarts);
        QFETCH(QString, tunables);
        const int restarts_before = m_worker->restarts();

        const Measurement m =
            m_worker->measure(payload(QStringLiteral(KERNCAST_TEST_DATA "/hostile/") + file, tunables), deadline);
        qInfo("%s -> %s: %s", qPrintable(file), to_string(m.status), m.reason.c_str());
        QVERIFY2(status.split(u'|').contains(QString(to_string(m.status))), to_string(m.status));
        QVERIFY2(QString::fromStdString(m.reason).contains(reason), m.reason.c_str());
        if (m.status != Status::Ok)
            QCOMPARE(m.speedup, 0.0);
        QCOMPARE(m_worker->restarts() > restarts_before, restarts);

        // Whatever happened, an ordinary kernel measures correctly right after.
        const Measurement ordinary = m_worker->measure(payload({}), 120);
        QVERIFY2(ordinary.status == Status::Ok,
                 qPrintable(QString(to_string(ordinary.status)) + ": " + QString::fromStdString(ordinary.reason)));
        QVERIFY(ordinary.candidate && ordinary.reference);
        QVERIFY2(ordinary.speedup > 0.8 && ordinary.speedup < 1.25, qPrintable(QString::number(ordinary.speedup)));
        // A cheat that ended ok ran at its honest speed: no faster than the reference's own code measured as a
        // candidate (the same saxpy), within noise.
        if (m.status == Status::Ok && status.contains(u'|'))
            QVERIFY2(m.speedup <= ordinary.speedup * 1.03,
                     qPrintable(QStringLiteral("%1x against the honest %2x").arg(m.speedup).arg(ordinary.speedup)));
        QCOMPARE(ordinary.device_kind, std::string("cuda"));
        QVERIFY(!ordinary.device.uuid.empty());
    }

    // The GELU cheat that skips a chunk in ten when a few of its outputs already hold the right values: it never
    // finds them (its outputs are its own, poisoned before every timed launch), so it is either incorrect or timed
    // doing all the work, which its honest twin (CHEAT=0) shows. On shared, never-reset outputs it measured 12%
    // faster than the twin.
    void staleGeluIsTimedHonestly() {
        const QString gelu = QStringLiteral(KERNCAST_SOURCE_DIR "/resources/problems/gelu");
        const QString file = QStringLiteral(KERNCAST_TEST_DATA "/hostile/stale_gelu.cu");
        const Measurement honest = m_worker->measure(payload(file, QStringLiteral("CHEAT=0"), gelu), 120);
        QVERIFY2(honest.status == Status::Ok, honest.reason.c_str());
        const Measurement cheat = m_worker->measure(payload(file, QStringLiteral("CHEAT=1"), gelu), 120);
        qInfo("honest %.4gx, cheat %s %.4gx: %s", honest.speedup, to_string(cheat.status), cheat.speedup,
              cheat.reason.c_str());
        if (cheat.status == Status::Ok)
            QVERIFY2(cheat.speedup < honest.speedup * 1.04,
                     qPrintable(QStringLiteral("the cheat measured %1x against the honest %2x")
                                    .arg(cheat.speedup)
                                    .arg(honest.speedup)));
        else
            QCOMPARE(QString(to_string(cheat.status)), QStringLiteral("incorrect"));
    }

    // Cheats against the timing protocol, each beside its honest twin (the same launches, doing the work),
    // measured in the same run. The rule: the cheat ends incorrect, suspect, crashed or timeout, or ok no faster
    // than 1.03x its twin. Where a cheat busy-waits to stay above the roofline floor, it waits half the twin's
    // time: had it worked, it would show about twice the twin's speedup.
    void cheatsGainNothing_data() {
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("cheat");  // tunables; PAD_NS is added when the file has it
        QTest::addColumn<QString>("twin");
        QTest::addColumn<QString>("expected");  // a status the cheat must end in; empty: any allowed by the rule
        const QString lib = QStringLiteral(KERNCAST_SOURCE_DIR "/resources/problems/");
        QTest::newRow("content-keyed memo (sgemm)") << lib + "sgemm"
                                                    << "memo_sgemm.cu"
                                                    << "CHEAT=1"
                                                    << "CHEAT=0" << QString();
        QTest::newRow("work only on checked launches (sgemm)") << lib + "sgemm"
                                                               << "checked_only_sgemm.cu"
                                                               << "CHEAT=1,EVERY=4"
                                                               << "CHEAT=0,EVERY=4"
                                                               << "incorrect";
        QTest::newRow("partial memo in a __device__ array (row_sum)") << lib + "row_sum"
                                                                      << "partial_memo_row_sum.cu"
                                                                      << "CHEAT=1,WHERE=0"
                                                                      << "CHEAT=0,WHERE=0"
                                                                      << "incorrect";
        QTest::newRow("partial memo past the input's guard zone (row_sum)") << lib + "row_sum"
                                                                            << "partial_memo_row_sum.cu"
                                                                            << "CHEAT=1,WHERE=1"
                                                                            << "CHEAT=0,WHERE=0" << QString();
        QTest::newRow("partial memo before the input (row_sum)") << lib + "row_sum"
                                                                 << "partial_memo_row_sum.cu"
                                                                 << "CHEAT=1,WHERE=2"
                                                                 << "CHEAT=0,WHERE=0" << QString();
        QTest::newRow("zeroes the reference's output (row_sum)") << lib + "row_sum"
                                                                 << "reach_reference_row_sum.cu"
                                                                 << "MODE=1"
                                                                 << "MODE=0" << QString();
        QTest::newRow("copies the reference's output (row_sum)") << lib + "row_sum"
                                                                 << "reach_reference_row_sum.cu"
                                                                 << "MODE=2"
                                                                 << "MODE=0" << QString();
        QTest::newRow("frames the reference (row_sum)") << lib + "row_sum"
                                                        << "frames_reference.cu"
                                                        << "FRAME=1"
                                                        << "FRAME=0" << QString();
        QTest::newRow("unstable softmax (large logits)") << lib + "softmax"
                                                         << "unstable_softmax.cu"
                                                         << "STABLE=0"
                                                         << "STABLE=1"
                                                         << "incorrect";
        QTest::newRow("answer for a public seed (kl_div)") << lib + "kl_div"
                                                           << "seed_answer_kl_div.cu"
                                                           << "CHEAT=1"
                                                           << "CHEAT=0"
                                                           << "incorrect";
    }
    void cheatsGainNothing() {
        QFETCH(QString, problem);
        QFETCH(QString, file);
        QFETCH(QString, cheat);
        QFETCH(QString, twin);
        QFETCH(QString, expected);
        const QString path = QStringLiteral(KERNCAST_TEST_DATA "/hostile/") + file;
        const Measurement honest = m_worker->measure(payload(path, twin, problem), 300);
        QVERIFY2(honest.status == Status::Ok && honest.candidate,
                 qPrintable(QString(to_string(honest.status)) + ": " + QString::fromStdString(honest.reason)));
        // The pad and the offline answer depend on this GPU: written into the source, as an author would.
        std::string source = readFile(path);
        auto set = [&](const std::string& name, qint64 value) {
            const std::string line = "#define " + name + " 0\n";
            const auto at = source.find(line);
            QVERIFY2(at != std::string::npos, qPrintable(QString::fromStdString(line)));
            source.replace(at, line.size(), "#define " + name + " " + std::to_string(value) + "\n");
        };
        if (source.find("#define PAD_NS 0") != std::string::npos)
            set("PAD_NS", qint64(honest.candidate->median_us * 500));
        if (source.find("#define ANSWER_BITS 0") != std::string::npos)
            set("ANSWER_BITS", publicSeedAnswer(problem));
        QTemporaryDir dir;
        const QString edited = dir.filePath(file);
        QFile out(edited);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(source.data(), qint64(source.size()));
        out.close();
        const Measurement m = m_worker->measure(payload(edited, cheat, problem), 300);
        qInfo("%s: twin ok %.4gx; cheat %s %.4gx: %s", qPrintable(QTest::currentDataTag()), honest.speedup,
              to_string(m.status), m.speedup, m.reason.c_str());
        QVERIFY2(m.status != Status::LaunchError, m.reason.c_str());  // never the reference's fault
        if (!expected.isEmpty())
            QCOMPARE(QString(to_string(m.status)), expected);
        if (m.status == Status::Ok)
            QVERIFY2(m.speedup <= honest.speedup * 1.03,
                     qPrintable(QStringLiteral("the cheat measured %1x against its twin's %2x")
                                    .arg(m.speedup)
                                    .arg(honest.speedup)));
        else
            QVERIFY2(m.status == Status::Incorrect || m.status == Status::Suspect || m.status == Status::Crashed ||
                         m.status == Status::Timeout,
                     to_string(m.status));
        // The worker measures an ordinary kernel correctly right after.
        const Measurement ordinary = m_worker->measure(payload({}), 120);
        QVERIFY2(ordinary.status == Status::Ok, ordinary.reason.c_str());
    }

    void cleanupTestCase() {
        if (m_worker)
            m_worker->stop();
    }
};

QTEST_GUILESS_MAIN(TestHostileKernels)
#include "tst_hostile_kernels.moc"
