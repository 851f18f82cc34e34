#include "engine/gpu/statistics.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace kerncast;

Q_DECLARE_METATYPE(std::vector<double>)

class TestStatistics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void medianAndPercentiles_data() {
        QTest::addColumn<std::vector<double>>("samples");
        QTest::addColumn<double>("median");
        QTest::addColumn<double>("p10");
        QTest::addColumn<double>("p90");
        QTest::newRow("one") << std::vector<double>{7} << 7.0 << 7.0 << 7.0;
        QTest::newRow("odd, unsorted") << std::vector<double>{3, 1, 2} << 2.0 << 1.2 << 2.8;
        QTest::newRow("even") << std::vector<double>{4, 1, 3, 2} << 2.5 << 1.3 << 3.7;
        QTest::newRow("eleven") << std::vector<double>{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0} << 5.0 << 1.0 << 9.0;
        QTest::newRow("outlier does not move the median")
            << std::vector<double>{100, 101, 99, 100, 5000} << 100.0 << 99.4 << 3040.4;
    }
    void medianAndPercentiles() {
        QFETCH(std::vector<double>, samples);
        QFETCH(double, median);
        QFETCH(double, p10);
        QFETCH(double, p90);
        const std::vector<double> copy = samples;
        QCOMPARE(stats::median(samples), median);
        QVERIFY(std::abs(stats::percentile(samples, 10) - p10) < 1e-9);
        QVERIFY(std::abs(stats::percentile(samples, 90) - p90) < 1e-9);
        QCOMPARE(samples, copy);  // the caller's order is kept
    }

    void emptySamplesGiveZeros() {
        const TimingStats t = stats::summarize({});
        QCOMPARE(t.n, 0);
        QCOMPARE(t.median_us, 0.0);
        QCOMPARE(stats::median({}), 0.0);
        QCOMPARE(stats::mean({}), 0.0);
    }

    void relativeStandardError() {
        // {9, 10, 11}: mean 10, sample standard deviation 1, standard error 1/sqrt(3)
        QVERIFY(std::abs(stats::rel_std_error({9, 10, 11}) - 1.0 / std::sqrt(3.0) / 10.0) < 1e-12);
        QCOMPARE(stats::rel_std_error({5, 5, 5, 5}), 0.0);
        // one sample can never satisfy a precision target
        QVERIFY(std::isinf(stats::rel_std_error({5})));
    }

    void bootstrapIsReproducibleAndBracketsTheMedian() {
        std::vector<double> s;
        for (int i = 0; i < 60; ++i)
            s.push_back(100.0 + std::sin(i * 1.7) * 3.0);
        const auto a = stats::bootstrap_median_ci(s);
        const auto b = stats::bootstrap_median_ci(s);
        QCOMPARE(a.low, b.low);
        QCOMPARE(a.high, b.high);
        const double med = stats::median(s);
        QVERIFY(a.low <= med && med <= a.high);
        QVERIFY(a.low < a.high);
        QVERIFY(a.low >= 97.0 && a.high <= 103.0);
        // a narrower confidence gives a narrower interval
        const auto narrow = stats::bootstrap_median_ci(s, 0.5);
        QVERIFY(narrow.high - narrow.low <= a.high - a.low);
    }

    void constantSamplesHaveAPointInterval() {
        const auto ci = stats::bootstrap_median_ci({42, 42, 42, 42});
        QCOMPARE(ci.low, 42.0);
        QCOMPARE(ci.high, 42.0);
    }

    void summarizeFillsEveryField() {
        const std::vector<double> s{10, 12, 11, 13, 9, 10.5};
        const TimingStats t = stats::summarize(s, {11, 11.5, 12});
        QCOMPARE(t.n, 6);
        QCOMPARE(t.samples_us, s);
        QCOMPARE(t.median_us, 10.75);
        QVERIFY(std::abs(t.mean_us - 65.5 / 6) < 1e-12);
        QVERIFY(t.p10_us < t.median_us && t.median_us < t.p90_us);
        QVERIFY(t.ci_low_us <= t.median_us && t.median_us <= t.ci_high_us);
        QVERIFY(t.rel_std_error > 0 && t.rel_std_error < 0.1);
        QCOMPARE(t.events_median_us, 11.5);
    }
};

QTEST_GUILESS_MAIN(TestStatistics)
#include "tst_statistics.moc"
