// The space model (engine/surrogate/space_model.h): a bagged booster ensemble on a family's tunables, fitted to the
// run's own measured configurations, and the expected improvement it ranks the whole space by. Synthetic spaces whose
// best configuration is known, so that what it learns can be checked.
#include "core/bins.h"
#include "core/error.h"
#include "engine/surrogate/space_model.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace kerncast;

namespace {

// A 2-tunable space (x 0..15, y 0..7): log speedup peaks at x 12, y 2, with an interaction (y matters only for
// large x), the kind of landscape a block size and a tile size make.
double truth(const Configuration& c) {
    const double x = static_cast<double>(c.at("x")), y = static_cast<double>(c.at("y"));
    return -0.01 * (x - 12) * (x - 12) - (x > 8 ? 0.05 * (y - 2) * (y - 2) : 0.02 * y);
}

std::vector<Configuration> whole_space() {
    std::vector<Configuration> out;
    for (int64_t x = 0; x < 16; ++x)
        for (int64_t y = 0; y < 8; ++y)
            out.push_back({{"x", x}, {"y", y}});
    return out;
}

}  // namespace

class TestSpaceModel : public QObject {
    Q_OBJECT
private slots:
    void expectedImprovementIsTheNormalFormula_data() {
        QTest::addColumn<double>("mean");
        QTest::addColumn<double>("sigma");
        QTest::addColumn<double>("best");
        QTest::addColumn<double>("expected");
        // (mean - best) Phi(z) + sigma phi(z), z = (mean - best) / sigma
        QTest::newRow("at the best") << 0.0 << 1.0 << 0.0 << 0.3989422804;
        QTest::newRow("one sigma above") << 1.0 << 1.0 << 0.0 << 1.0833154705;
        QTest::newRow("two sigma below") << -2.0 << 1.0 << 0.0 << 0.0084907995;
        QTest::newRow("no spread, above") << 0.3 << 0.0 << 0.1 << 0.2;
        QTest::newRow("no spread, below") << 0.0 << 0.0 << 0.1 << 0.0;
    }
    void expectedImprovementIsTheNormalFormula() {
        QFETCH(double, mean);
        QFETCH(double, sigma);
        QFETCH(double, best);
        QFETCH(double, expected);
        QVERIFY2(std::abs(expected_improvement(mean, sigma, best) - expected) < 1e-6,
                 qPrintable(QString::number(expected_improvement(mean, sigma, best), 'g', 10)));
    }

    // Fitted to a third of the space, it ranks the rest well and puts the true best among its top choices.
    void learnsTheLandscapeFromAFewMeasurements() {
        std::vector<Configuration> all = whole_space(), measured, rest;
        std::mt19937 rng(3);
        std::shuffle(all.begin(), all.end(), rng);
        for (size_t i = 0; i < all.size(); ++i)
            (i < 40 ? measured : rest).push_back(all[i]);
        std::vector<double> y;
        for (const auto& c : measured)
            y.push_back(truth(c));
        SpaceModel model({"x", "y"});
        QVERIFY(!model.fitted());
        model.fit(measured, y);
        QVERIFY(model.fitted());
        const auto predicted = model.predict(rest);
        QCOMPARE(predicted.size(), rest.size());
        // Rank correlation (concordant minus discordant pairs, over pairs) between prediction and truth.
        double concordant = 0, pairs = 0;
        for (size_t i = 0; i < rest.size(); ++i)
            for (size_t j = i + 1; j < rest.size(); ++j) {
                const double dt = truth(rest[i]) - truth(rest[j]), dp = predicted[i].mean - predicted[j].mean;
                if (dt == 0 || dp == 0)
                    continue;
                concordant += (dt > 0) == (dp > 0) ? 1 : -1;
                ++pairs;
            }
        QVERIFY2(concordant / pairs > 0.5, qPrintable(QString::number(concordant / pairs)));
        for (const auto& p : predicted)
            QVERIFY(p.sigma >= SpaceModelOptions{}.sigma_floor);
    }

    // A search that measures the expected improvement's top choice, one at a time from 8 random configurations,
    // finds the best of 128 configurations in far fewer measurements than the space holds.
    void expectedImprovementFindsTheBest() {
        const std::vector<Configuration> all = whole_space();
        std::vector<Configuration> measured;
        std::vector<double> y;
        std::mt19937 rng(7);
        std::vector<size_t> order(all.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        for (size_t i = 0; i < 8; ++i) {
            measured.push_back(all[order[i]]);
            y.push_back(truth(all[order[i]]));
        }
        const Configuration optimum{{"x", 12}, {"y", 2}};
        int steps = 0;
        while (std::find(measured.begin(), measured.end(), optimum) == measured.end() && steps < 40) {
            SpaceModel model({"x", "y"}, SpaceModelOptions{static_cast<uint64_t>(steps + 1)});
            model.fit(measured, y);
            std::vector<Configuration> pool;
            for (const auto& c : all)
                if (std::find(measured.begin(), measured.end(), c) == measured.end())
                    pool.push_back(c);
            const auto predicted = model.predict(pool);
            const double best = *std::max_element(y.begin(), y.end());
            size_t pick = 0;
            for (size_t i = 1; i < pool.size(); ++i)
                if (expected_improvement(predicted[i].mean, predicted[i].sigma, best) >
                    expected_improvement(predicted[pick].mean, predicted[pick].sigma, best))
                    pick = i;
            measured.push_back(pool[pick]);
            y.push_back(truth(pool[pick]));
            ++steps;
        }
        QVERIFY2(steps < 40, "the expected improvement never reached the best configuration in 40 measurements");
    }

    // A failed configuration counts as far below the slowest: its region is predicted slow.
    void failuresPullTheirRegionDown() {
        std::vector<Configuration> measured;
        std::vector<double> y;
        for (int64_t x = 0; x < 16; ++x) {
            measured.push_back({{"x", x}, {"y", 0}});
            y.push_back(x >= 12 ? std::numeric_limits<double>::quiet_NaN() : 0.01 * static_cast<double>(x));
        }
        SpaceModel model({"x", "y"});
        model.fit(measured, y);
        const auto p = model.predict({{{"x", 14}, {"y", 1}}, {{"x", 10}, {"y", 1}}});
        QVERIFY2(p[0].mean < p[1].mean - 0.5, qPrintable(QString("%1 vs %2").arg(p[0].mean).arg(p[1].mean)));
    }

    // The same seed and data give the same predictions; another seed draws other bootstrap samples.
    void deterministicForASeed() {
        std::vector<Configuration> measured;
        std::vector<double> y;
        for (const auto& c : whole_space())
            if ((c.at("x") + c.at("y")) % 5 == 0) {
                measured.push_back(c);
                y.push_back(truth(c));
            }
        SpaceModel a({"x", "y"}), b({"x", "y"}), c({"x", "y"}, SpaceModelOptions{2});
        a.fit(measured, y);
        b.fit(measured, y);
        c.fit(measured, y);
        const auto pa = a.predict(whole_space()), pb = b.predict(whole_space()), pc = c.predict(whole_space());
        bool differs = false;
        for (size_t i = 0; i < pa.size(); ++i) {
            QCOMPARE(pa[i].mean, pb[i].mean);
            QCOMPARE(pa[i].sigma, pb[i].sigma);
            differs = differs || pa[i].mean != pc[i].mean;
        }
        QVERIFY(differs);
    }

    // A forecast against an anchor: the normal's mass per bin of S, with the floor, summing to 1.
    void binProbabilitiesAreTheNormalsMass() {
        const BinScheme scheme = BinScheme::gfV2();
        const auto p = space_bin_probabilities(scheme, std::log(1.2), 0.05);
        double sum = 0;
        for (double v : p) {
            QVERIFY(v >= kSpaceFloor);
            sum += v;
        }
        QVERIFY(std::abs(sum - 1) < 1e-12);
        QCOMPARE(scheme.binOf(1.2), 5);  // (1.0, 1.41]: nearly all the mass
        QVERIFY(p[4] > 0.95);
        // Centred on an edge (2x): about half on each side (the bins beyond hold a few 1e-4).
        const auto q = space_bin_probabilities(scheme, std::log(2.0), 0.1);
        QVERIFY(std::abs(q[5] - q[6]) < 1e-3);
        QVERIFY(q[5] > 0.45);
    }

    void nothingToLearnFromLeavesItUnfitted() {
        SpaceModel model({"x"});
        model.fit({{{"x", 1}}, {{"x", 2}}},
                  {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()});
        QVERIFY(!model.fitted());
        QCOMPARE(model.predict({{{"x", 1}}})[0].mean, 0.0);
        QVERIFY_THROWS_EXCEPTION(Error, model.fit({{{"x", 1}}}, {}));
        QVERIFY_THROWS_EXCEPTION(Error, SpaceModel({"x"}, SpaceModelOptions{1, 1}));
    }
};

QTEST_GUILESS_MAIN(TestSpaceModel)
#include "tst_space_model.moc"
