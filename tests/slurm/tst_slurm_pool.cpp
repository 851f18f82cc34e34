// Workers as Slurm job steps, for real: the fixture starts a one-node Slurm from Debian's packages (munged with its
// own key and socket, slurmctld and slurmd on loopback ports, the configuration written here; SLURM_CONF points the
// clients at it), takes an allocation with salloc as a user's batch script would, and the pool starts replay workers
// with srun inside it. A search measured that way must equal the same search measured by one local worker; a hung
// candidate's step is cancelled. Skipped, with the reason, where the daemons cannot start (not root, packages
// missing).
#include "../support/daemon_fixture.h"
#include "../support/pool_search.h"

#include "engine/worker/measurement_pool.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace kerncast;
using namespace kerncast::test;

class TestSlurmPool : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QProcess m_munged, m_ctld, m_slurmd;
    QString m_skip;
    QString m_job;         // the allocation the steps run in
    std::string m_marker;  // the workers' resources folder, unique to this test

    QString path(const QString& name) const { return m_dir.filePath(name); }

    QString logs() const {
        return "\n--- slurmctld.log\n" + read_all(path("slurmctld.log")).right(1500) + "\n--- slurmd.log\n" +
               read_all(path("slurmd.log")).right(1500);
    }

    bool startDaemon(QProcess& p, const QString& program, const QStringList& args) {
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(program, args);
        if (!p.waitForStarted(5000)) {
            m_skip = program + " did not start: " + p.errorString();
            return false;
        }
        return true;
    }

    PoolConfig slurmPool(int workers) const {
        PoolConfig c;
        c.devices = {"replay:nvidia-h200"};
        c.workers = workers;
        c.launcher = "slurm";
        c.remote_resources = m_marker;
        return c;
    }

private slots:
    void initTestCase() {
        for (const char* exe : {"/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"})
            if (!QFile::exists(exe)) {
                m_skip = QString("%1 is missing (apt-get install munge slurmctld slurmd slurm-client)").arg(exe);
                return;
            }
        if (QStandardPaths::findExecutable("srun").isEmpty() || QStandardPaths::findExecutable("salloc").isEmpty()) {
            m_skip = "srun/salloc are missing (apt-get install slurm-client)";
            return;
        }
        if (::getuid() != 0) {
            m_skip = "slurmd runs job steps as their users and needs root; run this test as root";
            return;
        }
        QVERIFY(m_dir.isValid());
        QDir().mkpath(path("state"));
        QDir().mkpath(path("spool"));
        const Ran key = run_command("/usr/sbin/mungekey", {"-c", "-k", path("munge.key")});
        QVERIFY2(key.code == 0, qPrintable(key.output));
        QFile::setPermissions(path("munge.key"), QFile::ReadOwner);
        if (!startDaemon(m_munged, "/usr/sbin/munged",
                         {"-F", "-f", "--socket=" + path("munge.sock"), "--key-file=" + path("munge.key"),
                          "--pid-file=" + path("munged.pid"), "--log-file=" + path("munged.log"),
                          "--seed-file=" + path("munged.seed")}))
            return;
        if (!wait_until([&] { return QFile::exists(path("munge.sock")); }, 5000)) {
            m_skip = "munged did not open its socket: " + QString::fromLocal8Bit(m_munged.readAll());
            return;
        }
        const int ctld_port = free_port(), slurmd_port = free_port();
        {
            QFile f(path("slurm.conf"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QString("ClusterName=kerncast-test\nSlurmctldHost=localhost(127.0.0.1)\nSlurmUser=root\n"
                            "SlurmdUser=root\nSlurmctldPort=%1\nSlurmdPort=%2\nAuthType=auth/munge\n"
                            "AuthInfo=socket=%3\nCredType=cred/munge\nStateSaveLocation=%4\nSlurmdSpoolDir=%5\n"
                            "SlurmctldPidFile=%6\nSlurmdPidFile=%7\nSlurmctldLogFile=%8\nSlurmdLogFile=%9\n"
                            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
                            "ReturnToService=2\nSchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
                            "SelectTypeParameters=CR_Core\nJobAcctGatherType=jobacct_gather/none\n"
                            "AccountingStorageType=accounting_storage/none\n"
                            // The node may claim more CPUs than this machine has: four workers are four steps.
                            "SlurmdParameters=config_overrides\n"
                            "NodeName=kcnode NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 State=UNKNOWN\n"
                            "PartitionName=kc Nodes=kcnode Default=YES MaxTime=INFINITE State=UP\n")
                        .arg(ctld_port)
                        .arg(slurmd_port)
                        .arg(path("munge.sock"), path("state"), path("spool"), path("slurmctld.pid"),
                             path("slurmd.pid"), path("slurmctld.log"), path("slurmd.log"))
                        .toUtf8());
        }
        qputenv("SLURM_CONF", path("slurm.conf").toLocal8Bit());
        if (!startDaemon(m_ctld, "/usr/sbin/slurmctld", {"-D", "-i", "-f", path("slurm.conf")}) ||
            !startDaemon(m_slurmd, "/usr/sbin/slurmd", {"-D", "-f", path("slurm.conf"), "-N", "kcnode"}))
            return;
        Ran sinfo;
        const bool idle = wait_until(
            [&] {
            sinfo = run_command("sinfo", {"-h", "-N", "-o", "%T"}, 5000);
            return sinfo.output.trimmed() == "idle" || m_slurmd.state() != QProcess::Running;
            },
            20000, 300);
        if (!idle || sinfo.output.trimmed() != "idle") {
            m_skip = "the one-node Slurm did not come up (sinfo: " + sinfo.output.trimmed() + ")" + logs();
            return;
        }
        // An allocation for four workers, as `salloc -n 4` or an sbatch script would hold.
        const Ran alloc = run_command("salloc", {"-n", "4", "--no-shell", "-t", "30"}, 20000);
        const auto match = QRegularExpression("Granted job allocation (\\d+)").match(alloc.output);
        QVERIFY2(match.hasMatch(), qPrintable(alloc.output + logs()));
        m_job = match.captured(1);
        qputenv("SLURM_JOB_ID", m_job.toLocal8Bit());
        m_marker = private_resources(m_dir.path(), cli::resources_dir());
    }

    void init() {
        if (!m_skip.isEmpty())
            QSKIP(qPrintable(m_skip));
    }

    void cleanupTestCase() {
        if (!m_job.isEmpty())
            run_command("scancel", {m_job}, 10000);
        qunsetenv("SLURM_JOB_ID");
        for (QProcess* p : {&m_slurmd, &m_ctld, &m_munged}) {
            if (p->state() == QProcess::Running) {
                p->terminate();
                if (!p->waitForFinished(10000))
                    p->kill();
                p->waitForFinished(2000);
            }
        }
        qunsetenv("SLURM_CONF");
    }

    void searchWithSrunWorkersEqualsOneLocalWorker() {
        QTemporaryDir dir;
        const std::string single = dir.filePath("single.sqlite").toStdString();
        make_search_runner(pool_search_config("softmax", 24, 4), cli::resources_dir(), single, false)->runHere();

        SearchConfig cfg = pool_search_config("softmax", 24, 4);
        cfg.pool = slurmPool(4);
        const std::string steps = dir.filePath("slurm.sqlite").toStdString();
        auto runner = make_search_runner(cfg, cli::resources_dir(), steps, false);
        // Four job steps of the allocation, one per worker, while the search runs.
        const Ran squeue = run_command("squeue", {"-h", "-s", "-j", m_job, "-o", "%i"}, 10000);
        QVERIFY2(squeue.output.split('\n', Qt::SkipEmptyParts).size() == 4, qPrintable(squeue.output + logs()));
        const SearchSummary s = runner->runHere();
        QVERIFY2(s.state == RunState::Finished, s.reason.c_str());
        const StoreDigest a = store_digest(single), b = store_digest(steps);
        QCOMPARE(b.measurements, int64_t(24));
        QCOMPARE(b.measured_twice, int64_t(0));
        QCOMPARE(b.text, a.text);
        for (const auto& w : b.workers)
            QVERIFY2(w.find("replay:nvidia-h200 on slurm, worker ") == 0, w.c_str());
    }

    void hungCandidateCancelsItsStep() {
        PoolConfig cfg = slurmPool(1);
        cfg.replay_wall_time = 60;  // about 12 s for the softmax reference: far past the deadline below
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        const auto before = pids_with(m_marker);  // srun and the worker under slurmstepd
        QVERIFY2(before.size() >= 2, "the worker's step was not found");
        MeasureRequest r = reference_request("softmax");
        r.options.deadline_s = 1.0;
        const Measurement m = pool->measure(r).measurement;
        QCOMPARE(m.status, Status::Timeout);
        // srun got SIGTERM and cancelled the step, well before the 12 s the worker would have slept.
        QVERIFY2(all_end_within(before, 5000), "the timed-out worker's step is still running");
    }

    void lostStepRequeuesItsCandidate() {
        PoolConfig cfg = slurmPool(2);
        cfg.replay_wall_time = 5;
        auto pool = MeasurementPool::open(cfg, "", cli::resources_dir());
        // As if the node or the step went away.
        const KilledBatch b = measure_while_killing(*pool, pool->workerPid(0), 4, 400);  // srun
        QCOMPARE(b.ok, 4);
        QCOMPARE(b.notes.size(), size_t(1));
        QCOMPARE(b.notes[0].kind, std::string("requeued"));
    }
};

QTEST_GUILESS_MAIN(TestSlurmPool)
#include "tst_slurm_pool.moc"
