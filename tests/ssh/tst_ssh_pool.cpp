// Workers over ssh, for real: the fixture starts Debian's sshd on a loopback port with a host key and a user key it
// makes, and the pool starts replay workers through `ssh HOST exec kerncast-worker ...`. A search measured that way
// must equal the same search measured by one local worker; a hung candidate is killed on the far side of the
// connection; a dropped connection requeues its candidate. Skipped, with the reason, where sshd cannot start.
#include "../support/daemon_fixture.h"
#include "../support/pool_search.h"

#include "engine/worker/measurement_pool.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <pwd.h>

using namespace kerncast;
using namespace kerncast::test;

class TestSshPool : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QProcess m_sshd;
    QString m_skip;
    std::string m_marker;  // the workers' resources folder: unique to this test, so its processes can be found

    QString path(const QString& name) const { return m_dir.filePath(name); }

    PoolConfig sshPool(int workers) const {
        PoolConfig c;
        c.devices = {"replay:nvidia-h200"};
        c.workers = workers;
        c.launcher = "ssh:kc-loopback";
        c.remote_resources = m_marker;
        return c;
    }

private slots:
    void initTestCase() {
        const QString sshd = "/usr/sbin/sshd";
        if (!QFile::exists(sshd) || QStandardPaths::findExecutable("ssh").isEmpty() ||
            QStandardPaths::findExecutable("ssh-keygen").isEmpty()) {
            m_skip = "openssh-server and openssh-client are not installed (apt-get install openssh-server)";
            return;
        }
        QVERIFY(m_dir.isValid());
        for (const QString& key : {QString("host_key"), QString("user_key")}) {
            const Ran r = run_command("ssh-keygen", {"-q", "-t", "ed25519", "-N", "", "-f", path(key)});
            QVERIFY2(r.code == 0, qPrintable(r.output));
        }
        QFile::copy(path("user_key.pub"), path("authorized_keys"));
        QFile::setPermissions(path("authorized_keys"), QFile::ReadOwner | QFile::WriteOwner);
        const int port = free_port();
        const passwd* pw = ::getpwuid(::getuid());
        const QString user = pw ? QString::fromLocal8Bit(pw->pw_name) : QString("root");
        {
            QFile f(path("sshd_config"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QString("Port %1\nListenAddress 127.0.0.1\nHostKey %2\nAuthorizedKeysFile %3\n"
                            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                            "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile %4\n"
                            "LogLevel ERROR\nAllowUsers %5\n")
                        .arg(port)
                        .arg(path("host_key"), path("authorized_keys"), path("sshd.pid"), user)
                        .toUtf8());
        }
        {
            QFile f(path("ssh_config"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QString("Host kc-loopback\n  HostName 127.0.0.1\n  Port %1\n  User %2\n  IdentityFile %3\n"
                            "  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                            "  LogLevel ERROR\n")
                        .arg(port)
                        .arg(user, path("user_key"))
                        .toUtf8());
        }
        // sshd started as root wants its privilege-separation directory.
        if (::getuid() == 0)
            QDir().mkpath("/run/sshd");
        m_sshd.setProcessChannelMode(QProcess::MergedChannels);
        m_sshd.start(sshd, {"-D", "-e", "-f", path("sshd_config")});
        if (!m_sshd.waitForStarted(5000)) {
            m_skip = "sshd did not start: " + m_sshd.errorString();
            return;
        }
        qputenv("KERNCAST_SSH", ("ssh -F " + path("ssh_config")).toLocal8Bit());
        Ran probe;
        const bool up = wait_until(
            [&] {
            probe = run_command("ssh", {"-F", path("ssh_config"), "-o", "BatchMode=yes", "kc-loopback", "true"}, 10000);
            return probe.code == 0 || m_sshd.state() != QProcess::Running;
            },
            10000, 300);
        if (!up || probe.code != 0) {
            m_skip = "sshd on a loopback port does not accept the fixture's key: " + probe.output +
                     " / sshd: " + QString::fromLocal8Bit(m_sshd.readAll());
            return;
        }
        m_marker = private_resources(m_dir.path(), cli::resources_dir());
    }

    void init() {
        if (!m_skip.isEmpty())
            QSKIP(qPrintable(m_skip));
    }

    void cleanupTestCase() {
        if (m_sshd.state() == QProcess::Running) {
            m_sshd.terminate();
            m_sshd.waitForFinished(5000);
        }
        qunsetenv("KERNCAST_SSH");
    }

    void searchThroughSshEqualsOneLocalWorker() {
        QTemporaryDir dir;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        make_search_runner(pool_search_config("softmax", 24, 9), cli::resources_dir(), single, false)->runHere();

        SearchConfig cfg = pool_search_config("softmax", 24, 9);
        cfg.pool = sshPool(4);
        const std::string remote = dir.filePath("ssh.sqlite").toStdString();
        const SearchSummary s = make_search_runner(cfg, cli::resources_dir(), remote, false)->runHere();
        QVERIFY2(s.state == RunState::Finished, s.reason.c_str());
        const StoreDigest a = store_digest(single), b = store_digest(remote);
        QCOMPARE(b.measurements, int64_t(24));
        QCOMPARE(b.measured_twice, int64_t(0));
        QCOMPARE(b.text, a.text);
        QCOMPARE(b.workers.size(), size_t(24));
        for (const auto& w : b.workers)
            QVERIFY2(w.find("replay:nvidia-h200 on kc-loopback, worker ") == 0, w.c_str());
    }

    void hungCandidateIsKilledWhereItRuns() {
        PoolConfig cfg = sshPool(1);
        cfg.replay_wall_time = 60;  // the softmax reference takes about 12 s: far past the deadline below
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        const auto before = pids_with(m_marker);  // the ssh client and the worker on the far side
        QVERIFY2(before.size() >= 2, "the remote worker was not found");
        MeasureRequest r = reference_request("softmax");
        r.options.deadline_s = 1.0;
        const Measurement m = pool->measure(r).measurement;
        QCOMPARE(m.status, Status::Timeout);
        QVERIFY2(m.reason.find("no reply within 1 s") != std::string::npos, m.reason.c_str());
        // Ending the ssh session ended the worker on the remote side (it ends with its session), well before the
        // 12 s it would have slept.
        QVERIFY2(all_end_within(before, 4000), "a process of the timed-out worker is still running");
    }

    void droppedConnectionRequeuesItsCandidate() {
        PoolConfig cfg = sshPool(2);
        cfg.replay_wall_time = 5;  // about a second per measurement
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        const KilledBatch b = measure_while_killing(*pool, pool->workerPid(0), 4, 400);  // the ssh client
        QCOMPARE(b.ok, 4);
        QCOMPARE(b.notes.size(), size_t(1));
        QCOMPARE(b.notes[0].kind, std::string("requeued"));
    }

    void allGpusOfAHostWithoutGpusSaysSo() {
        PoolConfig cfg;
        cfg.devices = {"cuda:all@ssh:kc-loopback"};
        try {
            MeasurementPool::open(cfg, "", cli::resources_dir());
            QSKIP("the loopback host has a GPU: nothing to refuse");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("cuda:all@ssh:kc-loopback: the host has no usable GPU") == 0, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestSshPool)
#include "tst_ssh_pool.moc"
