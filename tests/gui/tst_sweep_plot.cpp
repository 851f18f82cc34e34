// The sweep plot: a kernel's speedup against the size that varies, failures on the 1x line, the placeholder until a
// sweep is stored.
#include "widgets/qcustomplot_include.h"
#include "widgets/sweep_plot.h"

#include "tests/support/plot_data.h"

#include <QTest>

using namespace kerncast;
using kerncast::test::pointsOf;

class TestSweepPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void speedupsBySizeFailuresOnTheParityLine() {
        SweepPlot plot;
        plot.setSweep({{65536, 1.4, "ok"}, {1024, 0.8, "ok"}, {4099, 0, "incorrect"}, {16384, 1.2, "ok"}},
                      QStringLiteral("N"));
        QCOMPARE(pointsOf(plot.speedups()), (QVector<QPointF>{{1024, 0.8}, {16384, 1.2}, {65536, 1.4}}));
        QCOMPARE(pointsOf(plot.failures()), (QVector<QPointF>{{4099, 1.0}}));
        QCOMPARE(plot.speedups()->keyAxis()->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(plot.speedups()->keyAxis()->range().contains(1024));
        QVERIFY(plot.speedups()->keyAxis()->range().contains(65536));
        QVERIFY(plot.speedups()->valueAxis()->range().upper > 1.4);
        QCOMPARE(plot.speedups()->keyAxis()->label(), QStringLiteral("N"));
        QVERIFY(!plot.isPlaceholderVisible());
        QCOMPARE(plot.title(), QStringLiteral("Speedup across 4 size(s)"));
    }

    void placeholderWithoutASweep() {
        SweepPlot plot;
        plot.setSweep({{1024, 1.0, "ok"}}, QStringLiteral("N"));
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
        QVERIFY(plot.speedups()->data()->isEmpty());
        QVERIFY(plot.failures()->data()->isEmpty());
    }
};

QTEST_MAIN(TestSweepPlot)
#include "tst_sweep_plot.moc"
