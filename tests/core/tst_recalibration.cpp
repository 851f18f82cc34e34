// BinRecalibration (core/recalibration.h): per-edge Platt recalibration of bin forecasts against measured outcomes.
// Outcomes are drawn with a fixed seed from processes whose truth is known, so each test knows what a good fit is.
#include "core/error.h"
#include "core/metrics.h"
#include "core/recalibration.h"
#include "tests/support/error_of.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <random>

using namespace kerncast;
using kerncast::test::errorOf;

namespace {

using Probabilities = std::array<double, kBinCount>;

// A number in [0, 1) from the generator's bits: the same draws on every standard library (the <random>
// distributions are not specified bit for bit).
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

Probabilities normalised(Probabilities p) {
    double total = 0;
    for (double v : p)
        total += v;
    for (double& v : p)
        v /= total;
    return p;
}

// A bin 1..8 drawn from p (normalised).
int drawBin(const Probabilities& p, std::mt19937_64& rng) {
    const double u = uniform(rng);
    double c = 0;
    int last = 1;
    for (int b = 1; b <= kBinCount; ++b) {
        if (p[b - 1] > 0)
            last = b;
        c += p[b - 1];
        if (u < c)
            return b;
    }
    return last;
}

// base with each bin scaled by a factor in [1 - amount, 1 + amount], normalised: forecasts that differ a little
// from one another, as a surrogate's do from candidate to candidate.
Probabilities jittered(const Probabilities& base, std::mt19937_64& rng, double amount) {
    Probabilities p{};
    for (size_t b = 0; b < kBinCount; ++b)
        p[b] = base[b] * (1 + amount * (2 * uniform(rng) - 1));
    return normalised(p);
}

// A forecast of any shape: a softmax of random scores, sharp or flat.
Probabilities anyForecast(std::mt19937_64& rng) {
    const double sharpness = 0.5 + 3 * uniform(rng);
    Probabilities p{};
    for (double& v : p)
        v = std::exp(sharpness * (2 * uniform(rng) - 1));
    return normalised(p);
}

std::array<double, kBinCount - 1> cumulative(const Probabilities& p) {
    std::array<double, kBinCount - 1> out{};
    double c = 0;
    for (size_t k = 0; k + 1 < kBinCount; ++k)
        out[k] = c += p[k];
    return out;
}

// The over-optimistic surrogate of the brief: 40% on bin 5 (and 35% above it) where only 5% of the outcomes fall in
// bin 5 and 15% above; most are a little slower than the anchor (bin 4).
constexpr Probabilities kOptimisticForecast{0.02, 0.03, 0.05, 0.15, 0.40, 0.20, 0.10, 0.05};
constexpr Probabilities kOptimisticTruth{0.03, 0.07, 0.25, 0.45, 0.05, 0.05, 0.05, 0.05};
// A search that drifts: outcomes mostly slow (bin 3) early, mostly fast (bin 6) later, and a forecast between them.
constexpr Probabilities kSlowOutcomes{0.05, 0.15, 0.5, 0.15, 0.05, 0.05, 0.03, 0.02};
constexpr Probabilities kFastOutcomes{0.02, 0.03, 0.05, 0.05, 0.15, 0.5, 0.15, 0.05};
constexpr Probabilities kBetween{0.05, 0.1, 0.15, 0.2, 0.2, 0.15, 0.1, 0.05};

BinRecalibration fittedOnOptimistic(std::mt19937_64& rng, int n) {
    BinRecalibration r;
    for (int i = 0; i < n; ++i) {
        const Probabilities p = jittered(kOptimisticForecast, rng, 0.5);
        r.add(p, drawBin(kOptimisticTruth, rng));
    }
    r.fit();
    return r;
}

QString show(const Probabilities& p) {
    QStringList parts;
    for (double v : p)
        parts << QString::number(v, 'f', 4);
    return parts.join(' ');
}

}  // namespace

class TestRecalibration : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // (a) An over-optimistic surrogate: after the fit its bin-5 mass comes down towards the 5% that come true, and
    // on fresh outcomes of the same process the recalibrated forecasts score a better (lower) Brier score.
    void overOptimisticForecastsComeDownAndScoreBetter() {
        std::mt19937_64 rng(20240611);
        const BinRecalibration r = fittedOnOptimistic(rng, 400);
        QVERIFY(r.usable());
        QCOMPARE(r.size(), size_t{400});

        constexpr int kHeldOut = 4000;
        double brier_raw = 0, brier_recalibrated = 0, bin5_raw = 0, bin5_recalibrated = 0;
        for (int i = 0; i < kHeldOut; ++i) {
            const Probabilities p = jittered(kOptimisticForecast, rng, 0.5);
            const int truth = drawBin(kOptimisticTruth, rng);
            const Probabilities q = r.apply(p);
            QVERIFY2(q[4] < p[4], qPrintable(show(p) + " -> " + show(q)));
            brier_raw += brier_score(p, truth);
            brier_recalibrated += brier_score(q, truth);
            bin5_raw += p[4];
            bin5_recalibrated += q[4];
        }
        brier_raw /= kHeldOut;
        brier_recalibrated /= kHeldOut;
        bin5_raw /= kHeldOut;
        bin5_recalibrated /= kHeldOut;
        const QString what = QStringLiteral("Brier %1 -> %2, bin 5 %3 -> %4")
                                 .arg(brier_raw)
                                 .arg(brier_recalibrated)
                                 .arg(bin5_raw)
                                 .arg(bin5_recalibrated);
        QVERIFY2(bin5_raw > 0.35, qPrintable(what));           // the premise
        QVERIFY2(bin5_recalibrated < 0.12, qPrintable(what));  // 5% come true
        // Better by a clear margin, not by noise: the raw forecasts are far from the truth.
        QVERIFY2(brier_recalibrated < brier_raw - 0.05, qPrintable(what));
    }

    // Each edge's map is the penalised maximum-likelihood fit the header promises: no map next to it (intercept or
    // slope moved a little, the slope kept at or above its floor of 0.05) has a lower penalised negative
    // log-likelihood. On forecasts that hardly vary and are far off (the optimistic process) the best slope at edges
    // 3 and 4 is the floor, and only the intercept is left to fit.
    void fitIsThePenalisedOptimum_data() {
        QTest::addColumn<int>("process");
        QTest::newRow("optimistic") << 0;
        QTest::newRow("calibrated") << 1;
    }
    void fitIsThePenalisedOptimum() {
        QFETCH(int, process);
        std::mt19937_64 rng(8);
        std::vector<std::pair<Probabilities, int>> outcomes;
        for (int i = 0; i < 400; ++i) {
            const Probabilities p = process == 0 ? jittered(kOptimisticForecast, rng, 0.5) : anyForecast(rng);
            outcomes.push_back({p, drawBin(process == 0 ? kOptimisticTruth : p, rng)});
        }
        BinRecalibration r;
        for (const auto& [p, bin] : outcomes)
            r.add(p, bin);
        r.fit();
        auto logit = [](double p) { return std::log(p / (1 - p)); };
        // The objective of the header, with every weight 1 (no cumulative here is near 0 or 1, so nothing is clipped).
        auto objective = [&](int edge, double a, double b) {
            double loss = BinRecalibration::kDefaultPrior * (a * a + (b - 1) * (b - 1));
            for (const auto& [p, bin] : outcomes) {
                const double x = logit(cumulative(p)[static_cast<size_t>(edge - 1)]);
                const double z = a + b * x;
                // -log sigmoid(z) if the outcome is at or below the edge, else -log(1 - sigmoid(z)).
                loss += std::log1p(std::exp(bin <= edge ? -z : z));
            }
            return loss;
        };
        QString worst;
        double worst_gain = 0;
        for (int edge = 1; edge < kBinCount; ++edge) {
            const double a = logit(r.transform(edge, 0.5));
            const double b = logit(r.transform(edge, 1 / (1 + std::exp(-1.0)))) - a;
            const double at_fit = objective(edge, a, b);
            for (const auto& [da, db] : std::vector<std::pair<double, double>>{
                     {0.01, 0}, {-0.01, 0}, {0, 0.01}, {0, -0.01}, {0.1, 0}, {-0.1, 0}, {0, 0.1}, {0, -0.1}}) {
                if (b + db < 0.05 - 1e-9)
                    continue;
                const double gain = at_fit - objective(edge, a + da, b + db);
                if (gain > worst_gain) {
                    worst_gain = gain;
                    worst = QStringLiteral("edge %1: fitted a %2 b %3 (loss %4); a %5 b %6 is lower by %7")
                                .arg(edge)
                                .arg(a)
                                .arg(b)
                                .arg(at_fit)
                                .arg(a + da)
                                .arg(b + db)
                                .arg(gain);
                }
            }
        }
        if (worst_gain > 1e-6)
            qInfo("%s", qPrintable(worst));
        QVERIFY2(worst_gain <= 1e-6, qPrintable(worst));
    }

    // (b) A calibrated surrogate (outcomes drawn from its own forecasts) is left close to itself.
    void calibratedForecastsStayAsTheyAre() {
        std::mt19937_64 rng(7);
        BinRecalibration r;
        for (int i = 0; i < 10000; ++i) {  // enough that the sample's noise stays below 0.05 where forecasts are sharp
            const Probabilities p = anyForecast(rng);
            r.add(p, drawBin(p, rng));
        }
        r.fit();
        double worst = 0;
        QString where;
        for (int i = 0; i < 500; ++i) {
            const Probabilities p = anyForecast(rng);
            const Probabilities q = r.apply(p);
            for (size_t b = 0; b < kBinCount; ++b)
                if (std::abs(q[b] - p[b]) > worst) {
                    worst = std::abs(q[b] - p[b]);
                    where = show(p) + " -> " + show(q);
                }
        }
        QVERIFY2(worst <= 0.05, qPrintable(QString::number(worst) + ": " + where));
        for (int edge = 1; edge < kBinCount; ++edge)
            for (double c : {0.1, 0.3, 0.5, 0.7, 0.9})
                QVERIFY2(std::abs(r.transform(edge, c) - c) <= 0.05,
                         qPrintable(QStringLiteral("edge %1: %2 -> %3").arg(edge).arg(c).arg(r.transform(edge, c))));
    }

    // (c) Whatever it is given, apply() gives a distribution (finite, not negative, sum 1), and a forecast that put
    // at least as much below every edge as another still does after. Fitted on an optimistic process, on a perverse
    // one (outcomes against the forecasts, where the maps hit their floor of slope), and unfitted.
    void applyGivesOrderedDistributions_data() {
        QTest::addColumn<int>("fit");
        QTest::newRow("optimistic") << 0;
        QTest::newRow("perverse") << 1;
        QTest::newRow("unfitted") << 2;
    }
    void applyGivesOrderedDistributions() {
        QFETCH(int, fit);
        std::mt19937_64 rng(99);
        BinRecalibration r;
        if (fit == 0) {
            r = fittedOnOptimistic(rng, 200);
        } else if (fit == 1) {
            // The outcome is the mirror image of the forecast's argmax: the more a forecast says low, the higher.
            for (int i = 0; i < 300; ++i) {
                const Probabilities p = anyForecast(rng);
                const int argmax = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin()) + 1;
                r.add(p, kBinCount + 1 - argmax);
            }
            r.fit();
        }
        auto checkDistribution = [&](const Probabilities& in, const Probabilities& out) {
            double sum = 0;
            for (double v : out) {
                QVERIFY2(std::isfinite(v) && v >= 0, qPrintable(show(in) + " -> " + show(out)));
                sum += v;
            }
            QVERIFY2(std::abs(sum - 1) <= 1e-12, qPrintable(show(in) + " -> " + show(out)));
        };
        std::vector<Probabilities> inputs;
        for (int b = 0; b < kBinCount; ++b) {
            Probabilities one_hot{};
            one_hot[static_cast<size_t>(b)] = 1;
            inputs.push_back(one_hot);
        }
        inputs.push_back(Probabilities{1, 1, 1, 1, 1, 1, 1, 1});
        inputs.push_back(Probabilities{1e-300, 0, 0, 0, 0, 0, 0, 3e-300});  // tiny, unnormalised
        inputs.push_back(Probabilities{5e6, 0, 2e6, 0, 0, 1, 0, 0});        // large, unnormalised
        for (int i = 0; i < 400; ++i) {
            Probabilities p = anyForecast(rng);
            for (double& v : p)
                if (uniform(rng) < 0.3)
                    v = 0;  // some bins empty
            p[static_cast<size_t>(rng() % kBinCount)] += 1e-3;
            for (double& v : p)
                v *= std::pow(10.0, 6 * uniform(rng) - 3);  // not normalised
            inputs.push_back(p);
        }
        for (const Probabilities& p : inputs) {
            const Probabilities q = r.apply(p);
            checkDistribution(p, q);
            // Some mass moved one or more bins up: at least as much below every edge before, so after too.
            for (int from = 0; from + 1 < kBinCount; ++from) {
                if (p[static_cast<size_t>(from)] == 0)
                    continue;
                Probabilities higher = p;
                const auto to = static_cast<size_t>(from + 1 + static_cast<int>(rng() % (kBinCount - 1 - from)));
                const double moved = p[static_cast<size_t>(from)] * uniform(rng);
                higher[static_cast<size_t>(from)] -= moved;
                higher[to] += moved;
                const Probabilities q_higher = r.apply(higher);
                checkDistribution(higher, q_higher);
                const auto c = cumulative(q), c_higher = cumulative(q_higher);
                for (size_t k = 0; k + 1 < kBinCount; ++k)
                    QVERIFY2(c_higher[k] <= c[k] + 1e-12,
                             qPrintable(QStringLiteral("edge %1: %2 -> %3 but %4 -> %5")
                                            .arg(k + 1)
                                            .arg(show(p), show(q), show(higher), show(q_higher))));
            }
        }
        // Each edge's map is increasing.
        for (int edge = 1; edge < kBinCount; ++edge) {
            double previous = -1;
            for (int i = 0; i <= 1000; ++i) {
                const double t = r.transform(edge, i / 1000.0);
                QVERIFY2(
                    t >= previous && t >= 0 && t <= 1,
                    qPrintable(
                        QStringLiteral("edge %1 at %2: %3 after %4").arg(edge).arg(i / 1000.0).arg(t).arg(previous)));
                previous = t;
            }
        }
    }

    // (d) Fewer than kMinOutcomes outcomes fit nothing: every map stays the identity and apply() gives the forecast
    // back; kMinOutcomes outcomes that all contradict the forecasts do move it.
    void tooFewOutcomesLeaveTheIdentity() {
        const Probabilities says_fast{0.01, 0.01, 0.02, 0.06, 0.1, 0.2, 0.3, 0.3};
        BinRecalibration r;
        for (size_t i = 0; i + 1 < BinRecalibration::kMinOutcomes; ++i)
            r.add(says_fast, 1);  // every one came out in bin 1
        QVERIFY(!r.usable());
        r.fit();
        for (int edge = 1; edge < kBinCount; ++edge)
            for (double c : {0.001, 0.25, 0.5, 0.75, 0.999})
                QVERIFY2(std::abs(r.transform(edge, c) - c) <= 1e-12,
                         qPrintable(QStringLiteral("edge %1: %2 -> %3")
                                        .arg(edge)
                                        .arg(c, 0, 'g', 17)
                                        .arg(r.transform(edge, c), 0, 'g', 17)));
        // Also at the ends: nothing below an edge stays nothing, everything stays everything, as before fit().
        QString ends;
        for (int edge = 1; edge < kBinCount && ends.isEmpty(); ++edge)  // the first edge that is off
            for (double c : {0.0, 1e-9, 1.0})
                if (std::abs(r.transform(edge, c) - c) > 1e-12)
                    ends += QStringLiteral("edge %1: %2 -> %3; ")
                                .arg(edge)
                                .arg(c, 0, 'g', 17)
                                .arg(r.transform(edge, c), 0, 'g', 17);
        if (!ends.isEmpty())
            qInfo("%s", qPrintable(ends));
        QVERIFY2(ends.isEmpty(), qPrintable(ends));
        const Probabilities flat{1, 1, 1, 1, 1, 1, 1, 1};
        const Probabilities back = r.apply(flat);
        for (double v : back)
            QVERIFY2(std::abs(v - 0.125) <= 1e-12, qPrintable(show(back)));
        const Probabilities same = r.apply(says_fast);
        for (size_t b = 0; b < kBinCount; ++b)
            QVERIFY2(std::abs(same[b] - says_fast[b]) <= 1e-12, qPrintable(show(same)));

        r.add(says_fast, 1);
        QVERIFY(r.usable());
        r.fit();
        // Eight outcomes in bin 1 against forecasts of 1% there: the mass below edge 4 goes up.
        QVERIFY2(r.apply(says_fast)[0] > 0.05, qPrintable(show(r.apply(says_fast))));
        QVERIFY2(r.transform(4, 0.1) > 0.2, qPrintable(QString::number(r.transform(4, 0.1))));
    }

    // (e) What cannot be a forecast or an outcome is refused with a reason, and leaves nothing behind.
    void badInputIsRefused_data() {
        QTest::addColumn<QList<double>>("probabilities");
        QTest::addColumn<int>("bin");
        QTest::addColumn<double>("weight");
        QTest::addColumn<QString>("expected");
        const QList<double> good{0.1, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.1};
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        QTest::newRow("bin 0") << good << 0 << 1.0 << "the true bin must be 1..8, got 0";
        QTest::newRow("bin 9") << good << 9 << 1.0 << "the true bin must be 1..8, got 9";
        QTest::newRow("negative probability")
            << QList<double>{0.1, -0.1, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1} << 3 << 1.0 << "must be finite and not negative";
        QTest::newRow("NaN probability") << QList<double>{0.1, nan, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1} << 3 << 1.0
                                         << "must be finite and not negative";
        QTest::newRow("infinite probability")
            << QList<double>{0.1, inf, 0.2, 0.2, 0.2, 0.2, 0.1, 0.1} << 3 << 1.0 << "must be finite and not negative";
        QTest::newRow("all zero") << QList<double>{0, 0, 0, 0, 0, 0, 0, 0} << 3 << 1.0 << "no probability";
        QTest::newRow("weight 0") << good << 3 << 0.0 << "weight must be a positive number";
        QTest::newRow("negative weight") << good << 3 << -1.0 << "weight must be a positive number";
        QTest::newRow("NaN weight") << good << 3 << nan << "weight must be a positive number";
        QTest::newRow("infinite weight") << good << 3 << inf << "weight must be a positive number";
    }
    void badInputIsRefused() {
        QFETCH(QList<double>, probabilities);
        QFETCH(int, bin);
        QFETCH(double, weight);
        QFETCH(QString, expected);
        Probabilities p{};
        std::copy(probabilities.begin(), probabilities.end(), p.begin());
        BinRecalibration r;
        r.add(Probabilities{1, 1, 1, 1, 1, 1, 1, 1}, 4);
        const std::string what = errorOf([&] { r.add(p, bin, weight); });
        QVERIFY2(what.find(expected.toStdString()) != std::string::npos, what.c_str());
        QVERIFY2(what.rfind("recalibration: ", 0) == 0, what.c_str());
        QCOMPARE(r.size(), size_t{1});
        // A forecast that cannot be added cannot be applied either (the bin and weight are add()'s alone).
        if (bin >= 1 && bin <= kBinCount && weight > 0 && std::isfinite(weight))
            QVERIFY_THROWS_EXCEPTION(Error, r.apply(p));
    }

    void transformRefusesOuterEdges_data() {
        QTest::addColumn<int>("edge");
        QTest::newRow("0") << 0;
        QTest::newRow("8") << 8;
        QTest::newRow("-1") << -1;
    }
    void transformRefusesOuterEdges() {
        QFETCH(int, edge);
        BinRecalibration r;
        const std::string what = errorOf([&] { r.transform(edge, 0.5); });
        QVERIFY2(what.find("is not an inner edge (1..7)") != std::string::npos, what.c_str());
    }

    // (f) Weights count: the same outcomes fitted with the old ones weighing little follow the new ones, and the
    // other way round. Old outcomes were mostly slow (bin 3), new ones mostly fast (bin 6); the forecasts are the
    // same throughout.
    void weightsDecideWhichOutcomesCount() {
        constexpr const Probabilities& kForecast = kBetween;
        constexpr const Probabilities& kOld = kSlowOutcomes;
        constexpr const Probabilities& kNew = kFastOutcomes;
        std::mt19937_64 rng(3);
        std::vector<std::pair<Probabilities, int>> old_outcomes, new_outcomes;
        for (int i = 0; i < 200; ++i)
            old_outcomes.push_back({jittered(kForecast, rng, 0.3), drawBin(kOld, rng)});
        for (int i = 0; i < 200; ++i)
            new_outcomes.push_back({jittered(kForecast, rng, 0.3), drawBin(kNew, rng)});
        // P(outcome at or below bin 4) after fitting with these weights of the old and the new outcomes.
        auto belowEdge4 = [&](double old_weight, double new_weight) {
            BinRecalibration r;
            for (const auto& [p, bin] : old_outcomes)
                r.add(p, bin, old_weight);
            for (const auto& [p, bin] : new_outcomes)
                r.add(p, bin, new_weight);
            r.fit();
            return cumulative(r.apply(kForecast))[3];
        };
        const double truth_old = cumulative(kOld)[3], truth_new = cumulative(kNew)[3];  // 0.85 and 0.15
        const double new_counts = belowEdge4(0.05, 1), equal = belowEdge4(1, 1), old_counts = belowEdge4(1, 0.05);
        const QString what = QStringLiteral("old weighs little %1, equal %2, new weighs little %3")
                                 .arg(new_counts)
                                 .arg(equal)
                                 .arg(old_counts);
        QVERIFY2(new_counts < equal - 0.15 && equal < old_counts - 0.15, qPrintable(what));
        QVERIFY2(std::abs(new_counts - truth_new) < 0.1, qPrintable(what));
        QVERIFY2(std::abs(old_counts - truth_old) < 0.1, qPrintable(what));
        QVERIFY2(std::abs(equal - (truth_old + truth_new) / 2) < 0.1, qPrintable(what));
        // Halving every weight only strengthens the pull towards the identity a little, with 400 outcomes.
        QVERIFY2(std::abs(belowEdge4(0.5, 0.5) - equal) < 0.02, qPrintable(what));
    }

    // (g) fit_recent, what a search fits on its measured forecasts: nothing below kMinOutcomes; then the fit of
    // weights halving every `half_life` outcomes back from the newest, so that a search drifting from slow children
    // to fast ones follows the fast ones, and more closely with a shorter half-life.
    void fitRecentWeighsTheNewestMost() {
        constexpr const Probabilities& kForecast = kBetween;
        constexpr const Probabilities& kOld = kSlowOutcomes;
        constexpr const Probabilities& kNew = kFastOutcomes;
        std::mt19937_64 rng(4);
        std::vector<RecalibrationOutcome> outcomes;
        for (int i = 0; i < 120; ++i)
            outcomes.push_back({jittered(kForecast, rng, 0.3), drawBin(i < 80 ? kOld : kNew, rng)});
        const std::vector<RecalibrationOutcome> few(outcomes.end() - (BinRecalibration::kMinOutcomes - 1),
                                                    outcomes.end());
        QVERIFY(!fit_recent(few, 32));
        QVERIFY(fit_recent(
            {few.front(), few.front(), few.front(), few.front(), few.front(), few.front(), few.front(), few.front()},
            32));
        BinRecalibration by_hand;
        for (size_t i = 0; i < outcomes.size(); ++i)
            by_hand.add(outcomes[i].first, outcomes[i].second, std::exp2(-static_cast<double>(119 - i) / 16));
        by_hand.fit();
        const auto recent = fit_recent(outcomes, 16);
        QVERIFY(recent);
        QCOMPARE(recent->size(), size_t(120));
        QCOMPARE(recent->apply(kForecast), by_hand.apply(kForecast));
        const double short_life = cumulative(fit_recent(outcomes, 8)->apply(kForecast))[3];
        const double long_life = cumulative(fit_recent(outcomes, 1e9)->apply(kForecast))[3];
        const QString what = QStringLiteral("half-life 8: %1, no decay: %2").arg(short_life).arg(long_life);
        QVERIFY2(short_life < long_life - 0.15, qPrintable(what));                      // towards the new outcomes
        QVERIFY2(std::abs(short_life - cumulative(kNew)[3]) < 0.15, qPrintable(what));  // 0.15
    }

    // (h) choose_recalibration, what a search shows: nothing is checked or fitted below 2 * kMinOutcomes; forecasts
    // steadily too optimistic are recalibrated (fit_recent on all outcomes); forecasts right for what happens now,
    // after older outcomes that went otherwise, are left as they are, since a fit on the older outcomes makes the
    // newest ones' forecasts worse.
    void chooseRecalibrationKeepsWhatHelps() {
        constexpr Probabilities kOptimistic{0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.2, 0.1};
        constexpr const Probabilities& kSlow = kSlowOutcomes;
        constexpr const Probabilities& kFast = kFastOutcomes;
        std::mt19937_64 rng(5);
        std::vector<RecalibrationOutcome> steady;
        for (int i = 0; i < 40; ++i)
            steady.push_back({jittered(kOptimistic, rng, 0.2), drawBin(kSlow, rng)});

        const std::vector<RecalibrationOutcome> few(steady.begin(), steady.begin() + 15);
        const RecalibrationChoice none = choose_recalibration(few, 32);
        QVERIFY(!none.fit);
        QCOMPARE(none.held_out, size_t(0));
        QCOMPARE(none.outcomes, size_t(15));

        const RecalibrationChoice kept = choose_recalibration(steady, 32);
        QVERIFY2(
            kept.fit,
            qPrintable(QStringLiteral("given %1, recalibrated %2").arg(kept.score_given).arg(kept.score_recalibrated)));
        QCOMPARE(kept.held_out, size_t(10));  // the newest quarter
        QVERIFY(kept.score_recalibrated < kept.score_given);
        QCOMPARE(kept.fit->size(), size_t(40));
        QCOMPARE(kept.fit->apply(kOptimistic), fit_recent(steady, 32)->apply(kOptimistic));

        std::vector<RecalibrationOutcome> drifted;
        for (int i = 0; i < 60; ++i)
            drifted.push_back({kFast, drawBin(kSlow, rng)});
        for (int i = 0; i < 20; ++i)
            drifted.push_back({kFast, drawBin(kFast, rng)});
        const RecalibrationChoice declined = choose_recalibration(drifted, 1e9);
        QVERIFY(!declined.fit);
        QCOMPARE(declined.held_out, size_t(20));
        QVERIFY2(declined.score_recalibrated > declined.score_given,
                 qPrintable(QStringLiteral("given %1, recalibrated %2")
                                .arg(declined.score_given)
                                .arg(declined.score_recalibrated)));
    }
};

QTEST_GUILESS_MAIN(TestRecalibration)
#include "tst_recalibration.moc"
