// The supervisor against a fake worker (tests/helpers/fake_worker.cpp) that misbehaves on request: no GPU needed.
#include "engine/worker/worker_supervisor.h"

#include <QTest>

#include <csignal>

using namespace kerncast;

namespace {

std::string fake_worker() { return std::string(KERNCAST_BINARY_DIR) + "/tests/fake_worker"; }

nlohmann::json ping(int64_t id, const std::string& fake = "") {
    auto j = make_ping_request(id);
    if (!fake.empty())
        j["fake"] = fake;
    return j;
}

MeasurePayload payload(const std::string& candidate_source) {
    MeasurePayload p;
    p.problem_json = R"({"name":"saxpy"})";
    p.problem_file = "/tmp/saxpy/problem.json";
    p.reference.source = "__global__ void ref() {}";
    p.candidate.source = candidate_source;
    p.candidate.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
    return p;
}

}  // namespace

class TestWorkerSupervisor : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        if (!QFile::exists(QString::fromStdString(fake_worker())))
            QFAIL(qPrintable("fake worker not built: " + QString::fromStdString(fake_worker())));
    }

    void helloGivesTheDevice() {
        WorkerSupervisor w(fake_worker(), 2);
        const auto hello = w.start();
        QVERIFY(hello.ok);
        QCOMPARE(hello.device.name, std::string("Fake GPU 2"));
        QCOMPARE(hello.ceilings.dram_gbps, 3000.0);
        QVERIFY(w.running());
        QCOMPARE(w.restarts(), 0);
    }

    void noDriverIsAReadableAnswer() {
        WorkerSupervisor w(fake_worker(), 0, {"--no-driver"});
        const auto hello = w.start();
        QVERIFY(!hello.ok);
        QVERIFY(hello.error.find("libcuda.so.1") != std::string::npos);
        QVERIFY(!w.running());
        // Asking it to measure anyway says why it cannot, rather than hanging or crashing.
        try {
            w.request(ping(1), 5);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("libcuda.so.1") != std::string::npos);
        }
    }

    void missingExecutableIsAnError() {
        WorkerSupervisor w("/nonexistent/kerncast-worker", 0);
        try {
            w.start();
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("/nonexistent/kerncast-worker") != std::string::npos);
        }
    }

    void pingPong() {
        WorkerSupervisor w(fake_worker(), 0);
        const auto reply = w.request(ping(41), 10);
        QCOMPARE(reply["op"].get<std::string>(), std::string("pong"));
        QCOMPARE(reply["id"].get<int>(), 41);
    }

    void hangIsKilledAndRestarted() {
        WorkerSupervisor w(fake_worker(), 0);
        w.start();
        const pid_t first = w.pid();
        try {
            w.request(ping(1, "hang"), 0.5);
            QFAIL("expected a timeout");
        } catch (const WorkerFailure& f) {
            QCOMPARE(f.status(), Status::Timeout);
            QCOMPARE(std::string(f.what()), std::string("no reply within 0.5 s; worker killed and restarted"));
        }
        QCOMPARE(w.restarts(), 1);
        QVERIFY(w.running());
        QVERIFY(w.pid() != first);
        // The hung process is gone (reaped), not left behind.
        QCOMPARE(::kill(first, 0), -1);
        QCOMPARE(w.request(ping(2), 10)["op"].get<std::string>(), std::string("pong"));
    }

    void deathIsReported_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("expected");
        QTest::newRow("segv") << "segv"
                              << "signal SIGSEGV";
        QTest::newRow("abort") << "abort"
                               << "signal SIGABRT";
        QTest::newRow("exit mid-request") << "exit"
                                          << "exit code 7";
    }
    void deathIsReported() {
        QFETCH(QString, mode);
        QFETCH(QString, expected);
        WorkerSupervisor w(fake_worker(), 0);
        const auto m = w.measure(payload("// FAKE:" + mode.toStdString() + "\n"), 10);
        QCOMPARE(m.status, Status::Crashed);
        QVERIFY2(m.reason.find(expected.toStdString()) != std::string::npos, m.reason.c_str());
        // The crash reason carries the worker's own last words.
        QVERIFY2(m.reason.find("fake worker:") != std::string::npos, m.reason.c_str());
        QVERIFY2(m.reason.find("worker restarted") != std::string::npos, m.reason.c_str());
        QCOMPARE(m.device.name, std::string("Fake GPU 0"));
        QCOMPARE(w.restarts(), 1);
        // The next candidate is measured normally by the new worker.
        const auto next = w.measure(payload("__global__ void k() {}"), 10);
        QCOMPARE(next.status, Status::Ok);
        QCOMPARE(next.speedup, 1.5);
    }

    void hangingMeasureBecomesTimeout() {
        WorkerSupervisor w(fake_worker(), 0);
        const auto m = w.measure(payload("// FAKE:hang\n"), 0.5);
        QCOMPARE(m.status, Status::Timeout);
        QCOMPARE(m.reason, std::string("no reply within 0.5 s; worker killed and restarted"));
        QCOMPARE(w.measure(payload("ok"), 10).status, Status::Ok);
    }

    void progressLinesAreDelivered() {
        WorkerSupervisor w(fake_worker(), 0);
        std::vector<std::string> stages;
        const auto m = w.measure(payload("__global__ void k() {}"), 10,
                                 [&](const std::string& stage) { stages.push_back(stage); });
        QCOMPARE(m.status, Status::Ok);
        QCOMPARE(stages, (std::vector<std::string>{"verify", "time"}));
        // The cubin's bytes (binary, with NUL and 0xff) arrived intact.
        QCOMPARE(m.reason, std::string("cubin_bytes=6"));
    }

    void malformedReplyIsACrashNotAHang() {
        WorkerSupervisor w(fake_worker(), 0);
        try {
            w.request(ping(1, "garbage"), 10);
            QFAIL("expected a failure");
        } catch (const WorkerFailure& f) {
            QCOMPARE(f.status(), Status::Crashed);
            const std::string why = f.what();
            QVERIFY2(why.find("broke the protocol") != std::string::npos, why.c_str());
            QVERIFY2(why.find("not JSON") != std::string::npos, why.c_str());
        }
        QCOMPARE(w.restarts(), 1);
        QCOMPARE(w.request(ping(2), 10)["op"].get<std::string>(), std::string("pong"));
    }

    void stickyErrorRestartsTheWorker() {
        WorkerSupervisor w(fake_worker(), 0);
        w.start();
        const pid_t first = w.pid();
        const auto m = w.measure(payload("// FAKE:sticky\n"), 10);
        QCOMPARE(m.status, Status::Crashed);
        QVERIFY2(m.reason.find("illegal memory access") != std::string::npos, m.reason.c_str());
        QVERIFY2(m.reason.find("exit code 3") != std::string::npos, m.reason.c_str());
        QCOMPARE(w.restarts(), 1);
        QVERIFY(w.pid() != first);
        QCOMPARE(w.measure(payload("ok"), 10).status, Status::Ok);
    }

    void stderrTailIsBounded() {
        WorkerSupervisor w(fake_worker(), 0);
        QCOMPARE(w.request(ping(1, "stderr"), 10)["op"].get<std::string>(), std::string("pong"));
        // Stderr is read while waiting; give the last lines a moment to arrive with the next exchange.
        w.request(ping(2), 10);
        const auto tail = w.stderrTail();
        QVERIFY(tail.size() <= 50);
        QVERIFY(!tail.empty());
        QCOMPARE(tail.back(), std::string("fake worker: line 80"));
    }

    void helloHangIsATimeout() {
        WorkerSupervisor w(fake_worker(), 0, {"--hello-hang"});
        w.setHelloDeadline(0.5);
        try {
            w.start();
            QFAIL("expected a failure");
        } catch (const WorkerFailure& f) {
            QCOMPARE(f.status(), Status::Timeout);
            QVERIFY2(std::string(f.what()).find("did not start: no reply within 0.5 s") != std::string::npos, f.what());
        }
        QVERIFY(!w.running());
    }

    void destructorEndsTheWorker() {
        pid_t pid;
        {
            WorkerSupervisor w(fake_worker(), 0);
            w.start();
            pid = w.pid();
            QVERIFY(pid > 0);
        }
        QCOMPARE(::kill(pid, 0), -1);
    }
};

QTEST_GUILESS_MAIN(TestWorkerSupervisor)
#include "tst_worker_supervisor.moc"
