// The device panel's pool table and run control's pool settings: rows follow the pool's snapshots (in place while
// the workers are the same), the state reads as a person would say it, and the settings become the PoolConfig the
// CLI's --device/--workers/--launcher would give.
#include "widgets/pool_model.h"
#include "widgets/pool_settings_widget.h"
#include "widgets/pool_view.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

using namespace kerncast;

namespace {

PoolSnapshot snapshot(int workers, const std::string& busy_state = "busy") {
    PoolSnapshot s;
    for (int i = 1; i <= workers; ++i) {
        PoolWorkerStatus w;
        w.index = i;
        w.device = "cuda:0";
        w.host = i % 2 ? "gpu-a" : "gpu-b";
        w.gpu = "NVIDIA H200";
        w.state = i == 1 ? busy_state : "idle";
        w.candidate = i == 1 ? 42 : 0;
        w.measured = i * 3;
        s.workers.push_back(w);
    }
    s.queued = 5;
    s.in_flight = 1;
    s.done = 9;
    return s;
}

}  // namespace

class TestPoolModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void rowsFollowSnapshots() {
        PoolModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.summary().isEmpty());
        model.setSnapshot(snapshot(3));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, PoolModel::StateColumn).data().toString(), QString("measuring #42"));
        QCOMPARE(model.index(1, PoolModel::HostColumn).data().toString(), QString("gpu-b"));
        QCOMPARE(model.index(2, PoolModel::MeasuredColumn).data().toString(), QString("9"));
        QCOMPARE(model.index(0, 0).data(PoolModel::CandidateRole).toLongLong(), 42);
        QCOMPARE(model.summary(), QString("Queue: 5 · in flight: 1 · measured: 9"));

        // The same workers: the rows change in place (no reset, so a selection stays).
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        PoolSnapshot later = snapshot(3, "retired");
        later.workers[0].note = "lost 3 requests in a row";
        model.setSnapshot(later);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0, PoolModel::StateColumn).data().toString(), QString("retired"));
        QCOMPARE(model.index(0, PoolModel::StateColumn).data(Qt::ToolTipRole).toString(),
                 QString("lost 3 requests in a row"));
        QVERIFY(model.index(0, PoolModel::StateColumn).data(Qt::ForegroundRole).isValid());

        // Another pool: the table starts over.
        model.setSnapshot(snapshot(5));
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 5);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void viewShowsOnlyWithAPool() {
        PoolView view;
        QVERIFY(view.isHidden());
        view.showSnapshot(snapshot(2), "cuda:0 on gpu-b, worker 2 retired after losing 3 requests in a row");
        QVERIFY(!view.isHidden());
        QCOMPARE(view.summaryLabel()->text(), QString("Queue: 5 · in flight: 1 · measured: 9"));
        QVERIFY(view.messageLabel()->text().contains("retired"));
        view.clear();
        QVERIFY(view.isHidden());
        QCOMPARE(view.model()->rowCount(), 0);
    }

    void settingsBecomeThePoolConfig() {
        PoolSettingsWidget w;
        // Untouched: no pool, the search measures on its one device as before.
        QVERIFY(w.poolConfig("replay:nvidia-h200").devices.empty());
        w.workersSpin()->setValue(4);
        PoolConfig c = w.poolConfig("replay:nvidia-h200");
        QCOMPARE(c.devices, (std::vector<std::string>{"replay:nvidia-h200"}));
        QCOMPARE(c.workers, 4);
        QCOMPARE(c.launcher, std::string("local"));
        w.extraDevicesEdit()->setText(" cuda:1 , cuda:all@ssh:gpu-b,");
        w.launcherEdit()->setText("slurm:--partition=gpu");
        w.allowMixedCheck()->setChecked(true);
        c = w.poolConfig("cuda:0");
        QCOMPARE(c.devices, (std::vector<std::string>{"cuda:0", "cuda:1", "cuda:all@ssh:gpu-b"}));
        QCOMPARE(c.launcher, std::string("slurm:--partition=gpu"));
        QVERIFY(c.allow_mixed);
        QVERIFY(!w.overlapBatches());  // a search waits for each batch unless asked
        w.overlapCheck()->setChecked(true);
        QVERIFY(w.overlapBatches());
        QCOMPARE(w.measureRound(), 1);  // batches as gating chose them unless asked
        w.roundSpin()->setValue(8);

        QTemporaryDir dir;
        {
            QSettings s(dir.filePath("k.ini"), QSettings::IniFormat);
            w.writeSettings(s);
        }
        PoolSettingsWidget back;
        QSettings s(dir.filePath("k.ini"), QSettings::IniFormat);
        back.readSettings(s);
        QCOMPARE(back.poolConfig("cuda:0").devices, c.devices);
        QCOMPARE(back.workersSpin()->value(), 4);
        QVERIFY(back.allowMixedCheck()->isChecked());
        QVERIFY(back.overlapBatches());
        QCOMPARE(back.measureRound(), 8);
    }
};

QTEST_MAIN(TestPoolModel)
#include "tst_pool_model.moc"
