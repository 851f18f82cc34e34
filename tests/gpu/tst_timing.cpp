// The statistical acceptance checks of the timer on a real GPU (the only timing assertions in the test suite):
// a kernel against itself gives 1.00 +- 0.02, CUPTI and CUDA events agree within 2% on a kernel of >= 100 us, and
// repeated measurements vary by at most 1%.
#include "core/measurement.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/statistics.h"
#include "engine/worker/worker_protocol.h"
#include "engine/worker/worker_supervisor.h"

#include <QFile>
#include <QTest>

#include <cmath>
#include <memory>

using namespace kerncast;

class TestTiming : public QObject {
    Q_OBJECT
private:
    std::vector<Measurement> m_runs;  // the reference against itself, repeated

    static std::string readFile(const QString& path) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot read %s", qPrintable(path));
        return f.readAll().toStdString();
    }

private Q_SLOTS:
    void initTestCase() {
        std::string why;
        const auto devices = cuda::discover_devices(&why);
        if (devices.empty())
            QSKIP(("no CUDA device: " + why).c_str());
        const QString dir = QStringLiteral(KERNCAST_TEST_DATA "/problems_gpu/saxpy_out");
        MeasurePayload p;
        p.problem_file = (dir + "/problem.json").toStdString();
        p.problem_json = readFile(dir + "/problem.json");
        p.reference.source = readFile(dir + "/reference.cu");
        p.reference.file = "reference.cu";
        Compiler compiler;
        CompileRequest req;
        req.source = p.reference.source;
        req.file_name = "reference.cu";
        req.arch = "sm_" + std::to_string(devices[0].cc_major) + std::to_string(devices[0].cc_minor);
        const CompileResult r = compiler.compile(req);
        QVERIFY2(r.ok, r.log.c_str());
        p.reference.cubin = r.cubin;
        p.candidate = p.reference;
        p.candidate.file = "same.cu";

        QString exe = qEnvironmentVariable("KERNCAST_WORKER");
        if (exe.isEmpty())
            exe = QStringLiteral(KERNCAST_BINARY_DIR "/app/kerncast-worker");
        WorkerSupervisor worker(exe.toStdString(), 0);
        const HelloReply hello = worker.start();
        QVERIFY2(hello.ok, hello.error.c_str());
        for (int i = 0; i < 5; ++i) {
            Measurement m = worker.measure(p, 300);
            QVERIFY2(m.status == Status::Ok,
                     qPrintable(QString(to_string(m.status)) + ": " + QString::fromStdString(m.reason)));
            qInfo("run %d: speedup %.4f, candidate median %.2f us (events %.2f, n %d, rse %.4f), reference median "
                  "%.2f us (events %.2f), floor %.2f us, clocks %d/%d MHz %d C -> %d/%d MHz %d C",
                  i, m.speedup, m.candidate->median_us, m.candidate->events_median_us, m.candidate->n,
                  m.candidate->rel_std_error, m.reference->median_us, m.reference->events_median_us,
                  m.roofline_floor_us, m.clocks_before.sm_clock_mhz, m.clocks_before.mem_clock_mhz,
                  m.clocks_before.temperature_c, m.clocks_after.sm_clock_mhz, m.clocks_after.mem_clock_mhz,
                  m.clocks_after.temperature_c);
            m_runs.push_back(std::move(m));
        }
        worker.stop();
    }

    void kernelAgainstItselfIsOne() {
        for (const Measurement& m : m_runs)
            QVERIFY2(std::abs(m.speedup - 1.0) <= 0.02, qPrintable(QString::number(m.speedup)));
    }

    void benchmarkKernelIsLongEnough() {
        for (const Measurement& m : m_runs)
            QVERIFY2(m.candidate->median_us >= 100, qPrintable(QString::number(m.candidate->median_us)));
    }

    void cuptiAndEventsAgree() {
        for (const Measurement& m : m_runs) {
            for (const TimingStats* t : {&*m.candidate, &*m.reference}) {
                const double diff = std::abs(t->events_median_us - t->median_us) / t->median_us;
                QVERIFY2(diff <= 0.02,
                         qPrintable(QString("CUPTI %1 us, events %2 us").arg(t->median_us).arg(t->events_median_us)));
            }
        }
    }

    void repeatedMeasurementsAgree() {
        std::vector<double> medians;
        for (const Measurement& m : m_runs)
            medians.push_back(m.candidate->median_us);
        const double cv = stats::stddev(medians) / stats::mean(medians);
        qInfo("coefficient of variation over %zu repeats: %.4f", medians.size(), cv);
        QVERIFY2(cv <= 0.01, qPrintable(QString::number(cv)));
    }

    void statisticsAreConsistent() {
        for (const Measurement& m : m_runs) {
            const TimingStats& t = *m.candidate;
            QVERIFY(t.n >= 5);
            QCOMPARE(t.samples_us.size(), size_t(t.n));
            QVERIFY(t.p10_us <= t.median_us && t.median_us <= t.p90_us);
            QVERIFY(t.ci_low_us <= t.median_us && t.median_us <= t.ci_high_us);
            QVERIFY(m.roofline_floor_us > 0 && m.roofline_floor_us < t.median_us);
            QVERIFY(!m.reverified);
            QCOMPARE(m.seeds_checked, 3);
            QVERIFY(m.verify_ms > 0 && m.time_ms > 0);
            QCOMPARE(m.device_kind, std::string("cuda"));
        }
    }
};

QTEST_GUILESS_MAIN(TestTiming)
#include "tst_timing.moc"
