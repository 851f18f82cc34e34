// The reliability diagram: one accuracy bar and one mean-confidence marker per non-empty bucket, every bucket's
// count below, and the ECE in the title.
#include "widgets/qcustomplot_include.h"
#include "widgets/reliability_plot.h"

#include "tests/support/plot_data.h"

#include <QTest>

#include <cmath>

using namespace kerncast;
using kerncast::test::pointsOf;

namespace {

// Ten buckets over [0, 1] as compute_metrics makes them; buckets 0 and 3 are empty.
std::vector<ReliabilityBucket> tenBuckets() {
    std::vector<ReliabilityBucket> buckets;
    for (int i = 0; i < 10; ++i) {
        ReliabilityBucket b;
        b.lower = i / 10.0;
        b.upper = (i + 1) / 10.0;
        if (i != 0 && i != 3) {
            b.count = 10 * i;
            b.accuracy = 0.08 * i;
            b.mean_confidence = (i + 0.5) / 10.0;
        }
        buckets.push_back(b);
    }
    return buckets;
}

}  // namespace

class TestReliabilityPlot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bucketsReachTheBarsAndMarkers() {
        ReliabilityPlot plot;
        plot.setBuckets(tenBuckets(), 0.043);
        QCOMPARE(plot.accuracyBars()->data()->size(), 8);  // empty buckets draw no bar
        QCOMPARE(plot.accuracyBars()->data()->at(0)->key, 0.15);
        QCOMPARE(plot.accuracyBars()->data()->at(0)->value, 0.08);
        QCOMPARE(plot.accuracyBars()->data()->at(7)->key, 0.95);
        QCOMPARE(plot.accuracyBars()->data()->at(7)->value, 0.72);
        QCOMPARE(plot.confidenceMarkers()->data()->size(), 8);
        QCOMPARE(plot.confidenceMarkers()->data()->at(7)->value, 0.95);
        for (const QPointF& bar : pointsOf(plot.accuracyBars()))
            QVERIFY(std::abs(bar.x() - 0.35) > 1e-9 && std::abs(bar.x() - 0.05) > 1e-9);
        QCOMPARE(plot.accuracyBars()->width(), 0.1 * 0.86);
    }

    // A forecaster that is never right: the bars have height 0 and the confidence markers sit on the diagonal, so
    // the gap bars must show the whole distance from 0 to the confidence, and be drawn.
    void aForecasterThatIsNeverRightShowsItsGap() {
        std::vector<ReliabilityBucket> buckets;
        for (int i = 0; i < 10; ++i) {
            ReliabilityBucket b;
            b.lower = i / 10.0;
            b.upper = (i + 1) / 10.0;
            if (i >= 5) {
                b.count = 20;
                b.accuracy = 0;
                b.mean_confidence = (i + 0.5) / 10.0;
            }
            buckets.push_back(b);
        }
        ReliabilityPlot plot;
        plot.resize(600, 450);
        plot.setBuckets(buckets, 0.75);
        QCOMPARE(plot.gapBars()->data()->size(), 5);
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(plot.accuracyBars()->data()->at(i)->value, 0.0);
            QCOMPARE(plot.gapBars()->data()->at(i)->value, (i + 5.5) / 10.0);
        }
        QCOMPARE(plot.gapBars()->barBelow(), plot.accuracyBars());
        // Drawn: inside the 0.85 bucket, halfway up its gap, the picture is not the plain background.
        const QImage image = plot.customPlot()->toPixmap(600, 450).toImage();
        QCPAxis* x = plot.accuracyBars()->keyAxis();
        QCPAxis* y = plot.accuracyBars()->valueAxis();
        int coloured = 0;
        const int row = qRound(y->coordToPixel(0.42));
        for (int px = qRound(x->coordToPixel(0.81)); px <= qRound(x->coordToPixel(0.89)); ++px) {
            const QColor c = image.pixelColor(px, row);
            coloured += c.red() > c.green() + 40 ? 1 : 0;
        }
        QVERIFY2(coloured >= 3, qPrintable(QStringLiteral("%1 red pixels across the bucket").arg(coloured)));
        // A calibrated forecaster has no gap to show.
        for (auto& b : buckets)
            b.accuracy = b.mean_confidence;
        plot.setBuckets(buckets, 0);
        for (int i = 0; i < 5; ++i)
            QCOMPARE(plot.gapBars()->data()->at(i)->value, 0.0);
    }

    void countsAreShownForEveryBucket() {
        ReliabilityPlot plot;
        plot.setBuckets(tenBuckets(), 0.043);
        QCOMPARE(plot.countBars()->data()->size(), 10);
        QVector<double> counts;
        for (const QPointF& bar : pointsOf(plot.countBars()))
            counts.append(bar.y());
        QCOMPARE(counts, (QVector<double>{0, 10, 20, 0, 40, 50, 60, 70, 80, 90}));
        QCOMPARE(plot.forecastCount(), int64_t{420});
        // The count axis leaves room over the tallest bar for its label.
        QVERIFY(plot.countBars()->valueAxis()->range().upper > 90);
    }

    void theTitleCarriesTheEce_data() {
        QTest::addColumn<double>("ece");
        QTest::addColumn<QString>("title");
        QTest::newRow("typical") << 0.043 << QStringLiteral("Reliability (ECE = 0.043)");
        QTest::newRow("rounded") << 0.12345 << QStringLiteral("Reliability (ECE = 0.123)");
        QTest::newRow("perfect") << 0.0 << QStringLiteral("Reliability (ECE = 0.000)");
    }
    void theTitleCarriesTheEce() {
        QFETCH(double, ece);
        QFETCH(QString, title);
        ReliabilityPlot plot;
        plot.setLocale(QLocale::c());
        plot.setBuckets(tenBuckets(), ece);
        QCOMPARE(plot.title(), title);
    }

    void takesTheMetricsAsComputed() {
        ForecastMetrics metrics;
        metrics.reliability = tenBuckets();
        metrics.ece = 0.071;
        metrics.accuracy = 0.9;
        metrics.majority_accuracy = 0.9;
        ReliabilityPlot plot;
        plot.setLocale(QLocale::c());
        plot.setMetrics(metrics);
        // The accuracy stands beside what always naming the most common bin would have scored.
        QCOMPARE(plot.title(), QStringLiteral("Reliability (ECE = 0.071; accuracy 0.90, majority bin 0.90)"));
        QCOMPARE(plot.accuracyBars()->data()->size(), 8);
    }

    void withoutForecastsShowsThePlaceholder() {
        ReliabilityPlot plot;
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.title(), QStringLiteral("Reliability"));
        plot.setBuckets(tenBuckets(), 0.05);
        QVERIFY(!plot.isPlaceholderVisible());
        // Buckets that are all empty (no forecast measured yet) are no data either.
        std::vector<ReliabilityBucket> empty = tenBuckets();
        for (ReliabilityBucket& b : empty)
            b.count = 0;
        plot.setBuckets(empty, 0);
        QVERIFY(plot.isPlaceholderVisible());
        QCOMPARE(plot.accuracyBars()->data()->size(), 0);
        QCOMPARE(plot.title(), QStringLiteral("Reliability"));
        plot.setBuckets(tenBuckets(), 0.05);
        plot.clear();
        QVERIFY(plot.isPlaceholderVisible());
    }
};

QTEST_MAIN(TestReliabilityPlot)
#include "tst_reliability_plot.moc"
