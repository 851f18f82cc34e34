// One forecast's distribution over the 8 bins: the predicted bin emphasised, the measured bin marked, bin names and
// ranges from the scheme under the bars.
#include "widgets/forecast_distribution_plot.h"
#include "widgets/qcustomplot_include.h"

#include "tests/support/plot_data.h"

#include <QTest>

#include <cmath>

using namespace kerncast;
using kerncast::test::pointsOf;

namespace {

Forecast aForecast() { return Forecast::fromRaw({0.01, 0.02, 0.05, 0.12, 0.38, 0.27, 0.12, 0.03}); }

}  // namespace

class TestForecastDistributionPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void thePredictedBinStandsApart() {
        ForecastDistributionPlot plot;
        plot.setForecast(aForecast(), BinScheme::gfV2());
        QCOMPARE(plot.predictedBin(), 5);
        QCOMPARE(pointsOf(plot.predictedBars()), (QVector<QPointF>{{5, 0.38}}));
        QCOMPARE(plot.otherBars()->data()->size(), 7);
        QVERIFY(!pointsOf(plot.otherBars()).contains(QPointF(5, 0.38)));
        QCOMPARE(pointsOf(plot.otherBars()).front(), QPointF(1, 0.01));
        QCOMPARE(pointsOf(plot.otherBars()).back(), QPointF(8, 0.03));
        QVERIFY(plot.predictedBars()->brush().color() != plot.otherBars()->brush().color());
        QVERIFY(plot.predictedBars()->name().contains(QStringLiteral("minor speedup")));
    }

    void binsAreNamedFromTheScheme() {
        ForecastDistributionPlot plot;
        plot.setLocale(QLocale::c());
        plot.setForecast(aForecast(), BinScheme::gfV2());
        const QStringList labels = plot.binLabels();
        QCOMPARE(labels.size(), 8);
        QCOMPARE(labels.front(), QStringLiteral("severe\nslowdown\n≤ ×0.25"));
        QCOMPARE(labels[4], QStringLiteral("minor\nspeedup\n×1–1.41"));
        QCOMPARE(labels.back(), QStringLiteral("extreme\nspeedup\n> ×4"));

        const BinScheme custom("halves", {0.125, 0.25, 0.5, 1, 2, 4, 8},
                               {"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"});
        plot.setForecast(aForecast(), custom);
        QCOMPARE(plot.binLabels()[5], QStringLiteral("b6\n×2–4"));
        QCOMPARE(plot.title(), QStringLiteral("Forecast distribution (halves)"));
    }

    void theMeasuredBinIsMarked_data() {
        QTest::addColumn<double>("speedup");
        QTest::addColumn<int>("bin");
        QTest::newRow("significant speedup") << 1.73 << 6;
        QTest::newRow("on the predicted bin") << 1.2 << 5;
        QTest::newRow("severe slowdown") << 0.1 << 1;
        QTest::newRow("upper edge is inclusive") << 2.0 << 6;
    }
    void theMeasuredBinIsMarked() {
        QFETCH(double, speedup);
        QFETCH(int, bin);
        ForecastDistributionPlot plot;
        plot.setLocale(QLocale::c());
        plot.setForecast(aForecast(), BinScheme::gfV2());
        QVERIFY(plot.measuredMarker()->data()->isEmpty());
        plot.setMeasuredSpeedup(speedup);
        QCOMPARE(plot.measuredBin(), bin);
        QCOMPARE(plot.measuredMarker()->data()->size(), 1);
        QCOMPARE(plot.measuredMarker()->data()->at(0)->key, double(bin));
        // Just above its bar, and in view.
        QVERIFY(plot.measuredMarker()->data()->at(0)->value > aForecast().probabilities[bin - 1]);
        QVERIFY(plot.measuredMarker()->valueAxis()->range().contains(plot.measuredMarker()->data()->at(0)->value));
        QVERIFY(plot.measuredMarker()->name().startsWith(QStringLiteral("Measured: ×")));
        plot.clearMeasured();
        QCOMPARE(plot.measuredBin(), 0);
        QVERIFY(plot.measuredMarker()->data()->isEmpty());
    }

    void aFailedMeasurementHasNoBin() {
        ForecastDistributionPlot plot;
        plot.setForecast(aForecast(), BinScheme::gfV2());
        plot.setMeasuredSpeedup(std::nan(""));
        QCOMPARE(plot.measuredBin(), 0);
        QVERIFY(plot.measuredMarker()->data()->isEmpty());
        QCOMPARE(plot.measuredMarker()->name(), QStringLiteral("Measured: failed (no speedup)"));
    }

    void withoutAForecastShowsThePlaceholder() {
        ForecastDistributionPlot plot;
        QVERIFY(plot.isPlaceholderVisible());
        plot.setMeasuredSpeedup(1.5);  // a measurement alone has nothing to mark
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.measuredBin(), 0);
        plot.setForecast(aForecast(), BinScheme::gfV2());
        QVERIFY(!plot.isPlaceholderVisible());
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
        QVERIFY(plot.predictedBars()->data()->isEmpty());
        QVERIFY(plot.otherBars()->data()->isEmpty());
    }
};

QTEST_MAIN(TestForecastDistributionPlot)
#include "tst_forecast_distribution_plot.moc"
