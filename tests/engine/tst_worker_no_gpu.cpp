// Drives the real kerncast-worker process without a CUDA driver (KERNCAST_LIBCUDA points nowhere, so this runs
// the same on GPU machines): the protocol must stay usable and explain why nothing can be measured.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

class TestWorkerNoGpu : public QObject {
    Q_OBJECT
private:
    QString m_exe;

    void start(QProcess& p, const QStringList& args = {}) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("KERNCAST_LIBCUDA", "/nonexistent/libcuda.so.1");
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::SeparateChannels);
        p.start(m_exe, args);
        QVERIFY2(p.waitForStarted(10000), qPrintable(p.errorString()));
    }
    // Sends one line and returns the next reply line as a JSON object.
    static QJsonObject exchange(QProcess& p, const QByteArray& line) {
        p.write(line + "\n");
        p.waitForBytesWritten(5000);
        QElapsedTimer t;
        t.start();
        while (!p.canReadLine() && t.elapsed() < 20000)
            p.waitForReadyRead(200);
        const QByteArray reply = p.readLine();
        QJsonParseError err{};
        const QJsonDocument doc = QJsonDocument::fromJson(reply, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject())
            qWarning() << "not a JSON object:" << reply;
        return doc.object();
    }

private Q_SLOTS:
    void initTestCase() {
        m_exe = qEnvironmentVariable("KERNCAST_WORKER");
        if (m_exe.isEmpty())
            m_exe = QStringLiteral(KERNCAST_BINARY_DIR "/app/kerncast-worker");
        QVERIFY2(QFile::exists(m_exe), qPrintable("kerncast-worker not found at " + m_exe));
    }

    void conversation() {
        QProcess p;
        start(p);

        QJsonObject hello = exchange(p, R"({"op":"hello"})");
        QCOMPARE(hello["op"].toString(), QString("hello"));
        QCOMPARE(hello["ok"].toBool(true), false);
        QVERIFY2(hello["error"].toString().startsWith("no CUDA driver: "), qPrintable(hello["error"].toString()));
        QVERIFY(hello["error"].toString().contains("libcuda"));

        QJsonObject pong = exchange(p, R"({"op":"ping","id":7})");
        QCOMPARE(pong["op"].toString(), QString("pong"));
        QCOMPARE(pong["id"].toInt(), 7);

        // A broken line is answered and the worker stays up.
        QJsonObject err = exchange(p, R"({"op":"ping","id":)");
        QCOMPARE(err["op"].toString(), QString("error"));
        QVERIFY(!err["message"].toString().isEmpty());
        QCOMPARE(exchange(p, R"({"op":"ping","id":8})")["id"].toInt(), 8);

        err = exchange(p, R"({"op":"dance","id":9})");
        QCOMPARE(err["op"].toString(), QString("error"));
        QCOMPARE(err["id"].toInt(), 9);
        QVERIFY(err["message"].toString().contains("dance"));

        // A well-formed measure request cannot be served without a driver: the reason, not a crash.
        const QByteArray measure = R"({"op":"measure","id":10,"problem":{"json":"{}","file":"/p/problem.json"},)"
                                   R"("reference":{"source":"","file":"reference.cu","tunables":{},"cubin_b64":""},)"
                                   R"("candidate":{"source":"","file":"k.cu","tunables":{},"cubin_b64":""}})";
        err = exchange(p, measure);
        QCOMPARE(err["op"].toString(), QString("error"));
        QCOMPARE(err["id"].toInt(), 10);
        QVERIFY2(err["message"].toString().contains("no CUDA driver"), qPrintable(err["message"].toString()));

        QCOMPARE(exchange(p, R"({"op":"ping","id":11})")["op"].toString(), QString("pong"));
        QCOMPARE(exchange(p, R"({"op":"shutdown"})")["op"].toString(), QString("bye"));
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 0);
        // Nothing but protocol lines on stdout.
        QVERIFY(p.readAllStandardOutput().trimmed().isEmpty());
    }

    void endOfInputExitsCleanly() {
        QProcess p;
        start(p);
        QCOMPARE(exchange(p, R"({"op":"ping","id":1})")["op"].toString(), QString("pong"));
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 0);
    }

    void badArgumentsAreRefused() {
        QProcess p;
        start(p, {"--gpu", "zero"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("--gpu"));
    }
};

QTEST_GUILESS_MAIN(TestWorkerNoGpu)
#include "tst_worker_no_gpu.moc"
