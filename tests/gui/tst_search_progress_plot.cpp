// Search progress: the best speedup as a step line over GPU measurements, carried on to the measurements spent so
// far, with an optional measure-all baseline in the legend.
#include "widgets/qcustomplot_include.h"
#include "widgets/search_progress_plot.h"

#include "tests/support/plot_data.h"

#include <QTest>

using namespace kerncast;
using kerncast::test::pointsOf;

namespace {

QStringList legendNames(const QCustomPlot* plot) {
    QStringList names;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            names << item->plottable()->name();
    return names;
}

}  // namespace

class TestSearchProgressPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theBestSoFarIsAStepLine() {
        SearchProgressPlot plot;
        // Out of order, with a point before any correct measurement (best 0), which is not drawn.
        plot.setProgress({{12, 1.8}, {1, 0}, {3, 1.1}, {7, 1.4}});
        QCOMPARE(plot.progressGraph()->lineStyle(), QCPGraph::lsStepLeft);
        QCOMPARE(pointsOf(plot.progressGraph()), (QVector<QPointF>{{3, 1.1}, {7, 1.4}, {12, 1.8}}));
        QVERIFY(plot.progressGraph()->keyAxis()->range().contains(12));
        QVERIFY(plot.progressGraph()->valueAxis()->range().contains(1.8));
        QVERIFY(plot.progressGraph()->valueAxis()->range().contains(1.0));  // the reference stays in view
    }

    void theLastBestIsCarriedToTheMeasurementsSoFar() {
        SearchProgressPlot plot;
        plot.setProgress({{3, 1.1}, {7, 1.4}}, 40);
        QCOMPARE(pointsOf(plot.progressGraph()), (QVector<QPointF>{{3, 1.1}, {7, 1.4}, {40, 1.4}}));
        plot.setProgress({{3, 1.1}, {7, 1.4}}, 5);  // fewer than the last point: nothing to carry
        QCOMPARE(plot.progressGraph()->data()->size(), 2);
    }

    void theTitleSaysTheBestAndWhen() {
        SearchProgressPlot plot;
        plot.setLocale(QLocale::c());
        plot.setProgress({{3, 1.1}, {7, 2.345}}, 40);
        QCOMPARE(plot.title(), QStringLiteral("Best speedup ×2.35 after 40 GPU measurements"));
        plot.setProgress({{1, 1.2}});
        QCOMPARE(plot.title(), QStringLiteral("Best speedup ×1.2 after 1 GPU measurement"));
    }

    void aBaselineJoinsTheLegendAndLeavesIt() {
        SearchProgressPlot plot;
        plot.setProgress({{3, 1.1}, {7, 1.4}}, 10);
        QVERIFY(!plot.hasBaseline());
        QCOMPARE(legendNames(plot.customPlot()), QStringList{QStringLiteral("This run")});
        plot.setBaseline({{5, 1.05}, {60, 1.5}}, 100);
        QVERIFY(plot.hasBaseline());
        QCOMPARE(pointsOf(plot.baselineGraph()), (QVector<QPointF>{{5, 1.05}, {60, 1.5}, {100, 1.5}}));
        QCOMPARE(plot.baselineGraph()->lineStyle(), QCPGraph::lsStepLeft);
        QCOMPARE(legendNames(plot.customPlot()),
                 (QStringList{QStringLiteral("This run"), QStringLiteral("Measure-all")}));
        QVERIFY(plot.baselineGraph()->keyAxis()->range().contains(100));  // the view spans both series
        plot.setBaseline({{5, 1.05}}, -1, QStringLiteral("Measure-all (run 12)"));
        QVERIFY(legendNames(plot.customPlot()).contains(QStringLiteral("Measure-all (run 12)")));
        plot.clearBaseline();
        QVERIFY(!plot.hasBaseline());
        QCOMPARE(legendNames(plot.customPlot()), QStringList{QStringLiteral("This run")});
    }

    void withoutProgressShowsThePlaceholder() {
        SearchProgressPlot plot;
        QVERIFY(plot.isPlaceholderVisible());
        plot.setProgress({{1, 0}});  // measured, but nothing correct yet
        QVERIFY(plot.isPlaceholderVisible());
        plot.setProgress({{2, 1.3}});
        QVERIFY(!plot.isPlaceholderVisible());
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.title(), QStringLiteral("Best speedup vs GPU measurements"));
    }
};

QTEST_MAIN(TestSearchProgressPlot)
#include "tst_search_progress_plot.moc"
