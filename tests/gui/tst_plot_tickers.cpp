// Axis labels as a reader sees them: speedups as "×0.5" … "×16", bin ranges, counts and shares.
#include "widgets/plot_tickers.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace kerncast;

namespace {

// The labels a ticker puts on an axis showing `range`.
QStringList labelsFor(QCPAxisTicker& ticker, const QCPRange& range) {
    QVector<double> ticks;
    QVector<QString> labels;
    ticker.generate(range, QLocale::c(), QLatin1Char('g'), 6, ticks, nullptr, &labels);
    return QStringList(labels.begin(), labels.end());
}

QCPRange logRange(double lowerSpeedup, double upperSpeedup) { return {std::log(lowerSpeedup), std::log(upperSpeedup)}; }

}  // namespace

class TestPlotTickers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void formatsSpeedups_data() {
        QTest::addColumn<double>("speedup");
        QTest::addColumn<QString>("expected");
        QTest::newRow("one") << 1.0 << QStringLiteral("×1");
        QTest::newRow("two") << 2.0 << QStringLiteral("×2");
        QTest::newRow("half") << 0.5 << QStringLiteral("×0.5");
        QTest::newRow("eighth") << 0.125 << QStringLiteral("×0.125");
        QTest::newRow("sixteenth") << 1.0 / 16 << QStringLiteral("×1/16");
        QTest::newRow("bin edge") << std::sqrt(2.0) << QStringLiteral("×1.41");
        QTest::newRow("measured") << 1.7349 << QStringLiteral("×1.73");
        QTest::newRow("large") << 1024.4 << QStringLiteral("×1024");
        QTest::newRow("failed") << 0.0 << QStringLiteral("–");
        QTest::newRow("not a number") << std::nan("") << QStringLiteral("–");
    }
    void formatsSpeedups() {
        QFETCH(double, speedup);
        QFETCH(QString, expected);
        QCOMPARE(formatSpeedup(speedup, QLocale::c()), expected);
    }

    void formatsSpeedupsInTheUsersLocale() {
        QCOMPARE(formatSpeedup(0.5, QLocale(QLocale::German)), QStringLiteral("×0,5"));
    }

    void formatsBinRanges_data() {
        QTest::addColumn<double>("lower");
        QTest::addColumn<double>("upper");
        QTest::addColumn<QString>("expected");
        QTest::newRow("first bin") << 0.0 << 0.25 << QStringLiteral("≤ ×0.25");
        QTest::newRow("middle bin") << 0.5 << 0.71 << QStringLiteral("×0.5–0.71");
        QTest::newRow("last bin") << 4.0 << std::numeric_limits<double>::infinity() << QStringLiteral("> ×4");
    }
    void formatsBinRanges() {
        QFETCH(double, lower);
        QFETCH(double, upper);
        QFETCH(QString, expected);
        QCOMPARE(formatSpeedupRange(lower, upper, QLocale::c()), expected);
    }

    void formatsCounts_data() {
        QTest::addColumn<qint64>("count");
        QTest::addColumn<QString>("expected");
        QTest::newRow("small") << qint64(523) << QStringLiteral("523");
        QTest::newRow("thousands") << qint64(1234) << QStringLiteral("1.2k");
        QTest::newRow("tens of thousands") << qint64(12345) << QStringLiteral("12k");
        QTest::newRow("millions") << qint64(3400000) << QStringLiteral("3.4M");
    }
    void formatsCounts() {
        QFETCH(qint64, count);
        QFETCH(QString, expected);
        QCOMPARE(formatCount(count, QLocale::c()), expected);
    }

    void logSpeedupAxesTickOnRoundSpeedups_data() {
        QTest::addColumn<double>("lower");
        QTest::addColumn<double>("upper");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("a run's spread: powers of four")
            << 1.0 / 20 << 20.0
            << QStringList{QStringLiteral("×1/16"), QStringLiteral("×0.25"), QStringLiteral("×1"), QStringLiteral("×4"),
                           QStringLiteral("×16")};
        QTest::newRow("a few doublings: powers of two")
            << 0.2 << 5.0
            << QStringList{QStringLiteral("×0.25"), QStringLiteral("×0.5"), QStringLiteral("×1"), QStringLiteral("×2"),
                           QStringLiteral("×4")};
        QTest::newRow("close to the reference: round speedups")
            << 0.85 << 1.35
            << QStringList{QStringLiteral("×0.9"), QStringLiteral("×1"), QStringLiteral("×1.1"), QStringLiteral("×1.2"),
                           QStringLiteral("×1.3")};
    }
    void logSpeedupAxesTickOnRoundSpeedups() {
        QFETCH(double, lower);
        QFETCH(double, upper);
        QFETCH(QStringList, expected);
        SpeedupTicker ticker(SpeedupTicker::Scale::Log);
        QCOMPARE(labelsFor(ticker, logRange(lower, upper)), expected);
    }

    void linearSpeedupAxesLabelTheirTicks() {
        SpeedupTicker ticker(SpeedupTicker::Scale::Linear);
        QCOMPARE(labelsFor(ticker, QCPRange(0.9, 3.1)),
                 (QStringList{QStringLiteral("×1"), QStringLiteral("×1.5"), QStringLiteral("×2"),
                              QStringLiteral("×2.5"), QStringLiteral("×3")}));
    }

    void sharesAreLabelledAsPercentages() {
        PercentTicker ticker;
        QCOMPARE(labelsFor(ticker, QCPRange(0, kFullShare)),
                 (QStringList{QStringLiteral("0%"), QStringLiteral("20%"), QStringLiteral("40%"), QStringLiteral("60%"),
                              QStringLiteral("80%"), QStringLiteral("100%")}));
    }
};

QTEST_MAIN(TestPlotTickers)
#include "tst_plot_tickers.moc"
