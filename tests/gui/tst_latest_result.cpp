// "Keep only the latest result": a background job that ends after a newer one started is dropped, whatever order
// the two end in.
#include "app/gui/latest_result.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <vector>

using namespace kerncast;

class TestLatestResult : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aStaleResultIsDropped_data() {
        QTest::addColumn<int>("firstMs");
        QTest::addColumn<int>("secondMs");
        QTest::newRow("the older job ends last") << 400 << 10;
        QTest::newRow("the older job ends first") << 10 << 400;
    }
    void aStaleResultIsDropped() {
        QFETCH(int, firstMs);
        QFETCH(int, secondMs);
        QObject context;
        LatestResult<int> latest(&context);
        std::vector<int> shown;
        latest.start(
            [firstMs] {
            QThread::msleep(firstMs);
            return 1;
            },
            [&](int v) { shown.push_back(v); });
        latest.start(
            [secondMs] {
            QThread::msleep(secondMs);
            return 2;
            },
            [&](int v) { shown.push_back(v); });
        QTRY_COMPARE_WITH_TIMEOUT(latest.running(), 0, 5000);
        QCOMPARE(shown, std::vector<int>{2});
    }

    void discardDropsWhatIsRunning() {
        QObject context;
        LatestResult<QString> latest(&context);
        int calls = 0;
        latest.start([] { return QStringLiteral("late"); }, [&](const QString&) { ++calls; });
        latest.discard();
        QTRY_COMPARE_WITH_TIMEOUT(latest.running(), 0, 5000);
        QCOMPARE(calls, 0);
        latest.start([] { return QStringLiteral("kept"); }, [&](const QString& s) { calls += s == "kept" ? 1 : 0; });
        QTRY_COMPARE_WITH_TIMEOUT(calls, 1, 5000);
    }
};

QTEST_MAIN(TestLatestResult)
#include "tst_latest_result.moc"
