#include "core/error.h"
#include "core/metrics.h"
#include "tests/support/error_of.h"

#include <QTest>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

using namespace kerncast;
using kerncast::test::errorOf;

// Expected values below are worked out by hand in the comments, with the gf-v2 scheme (edges 0.25 0.5 0.71 1.0 1.41
// 2.0 4.0). Speedups used and their true bins: 0.2 -> 1, 0.9 -> 4, 1.2 -> 5, 3.0 -> 7, 5.0 -> 8.
#define COMPARE_NEAR(actual, expected)                                                                                 \
    do {                                                                                                               \
        const double a_ = (actual), e_ = (expected);                                                                   \
        QVERIFY2(                                                                                                      \
            std::abs(a_ - e_) <= 1e-12 * std::max(1.0, std::abs(e_)),                                                  \
            qPrintable(QStringLiteral("%1 is %2, expected %3").arg(#actual).arg(a_, 0, 'g', 17).arg(e_, 0, 'g', 17))); \
    } while (0)

namespace {

using Probabilities = std::array<double, kBinCount>;

// Probabilities from (bin, p) pairs, bins 1..8.
Probabilities probs(std::initializer_list<std::pair<int, double>> mass) {
    Probabilities p{};
    for (const auto& [bin, value] : mass)
        p[bin - 1] = value;
    return p;
}

ScoredForecast scored(Probabilities p, double speedup, std::string pack = "p") {
    ScoredForecast f;
    f.probabilities = p;
    f.true_speedup = speedup;
    f.pack = std::move(pack);
    return f;
}

// Case A, two forecasts in one pack.
//  F1: bins 5,6 at 0.5 (argmax tie -> 5), confidence 0.5, speedup 1.2 (bin 5): correct. Expected bin 5.5.
//  F2: bin 1 0.25, bin 2 0.75 -> predicted 2, confidence 0.75, speedup 3.0 (bin 7): wrong by 5. Expected bin 1.75.
std::vector<ScoredForecast> caseA() {
    return {scored(probs({{5, 0.5}, {6, 0.5}}), 1.2), scored(probs({{1, 0.25}, {2, 0.75}}), 3.0)};
}

// Case B, four forecasts in one pack.
//  a: bins 4,5 at 0.5 -> predicted 4 (tie), confidence 0.5, speedup 0.9 (bin 4): correct. Expected bin 4.5.
//  b: bins 3,4 at 0.5 -> predicted 3 (tie), confidence 0.5, speedup 0.9 (bin 4): wrong by 1. Expected bin 3.5.
//  c: bins 1..5 at 0.2 -> predicted 1, confidence 0.2 (an ECE edge), speedup 0.2 (bin 1): correct. Expected 3.
//  d: bins 1..4 at 0.125, bins 6,7 at 0.25 -> predicted 6 (tie), confidence 0.25, speedup 5.0 (bin 8): wrong by 2.
//     Expected bin 0.125 * 10 + 0.25 * 13 = 4.5, tied with a.
std::vector<ScoredForecast> caseB() {
    return {scored(probs({{4, 0.5}, {5, 0.5}}), 0.9), scored(probs({{3, 0.5}, {4, 0.5}}), 0.9),
            scored(probs({{1, 0.2}, {2, 0.2}, {3, 0.2}, {4, 0.2}, {5, 0.2}}), 0.2),
            scored(probs({{1, 0.125}, {2, 0.125}, {3, 0.125}, {4, 0.125}, {6, 0.25}, {7, 0.25}}), 5.0)};
}

// Straight from the definition: every pair, signs of the differences.
double bruteForceTauB(const std::vector<double>& x, const std::vector<double>& y) {
    int64_t concordant = 0, discordant = 0, tiedX = 0, tiedY = 0, pairs = 0;
    for (size_t i = 0; i < x.size(); ++i)
        for (size_t j = i + 1; j < x.size(); ++j) {
            ++pairs;
            const bool tx = x[i] == x[j], ty = y[i] == y[j];
            tiedX += tx ? 1 : 0;
            tiedY += ty ? 1 : 0;
            if (tx || ty)
                continue;
            ((x[i] < x[j]) == (y[i] < y[j]) ? concordant : discordant) += 1;
        }
    if (pairs == 0 || tiedX == pairs || tiedY == pairs)
        return 0;
    return static_cast<double>(concordant - discordant) /
           std::sqrt(static_cast<double>(pairs - tiedX) * static_cast<double>(pairs - tiedY));
}

double expectedBinOf(const Probabilities& p) {
    double e = 0;
    for (int b = 1; b <= kBinCount; ++b)
        e += b * p[b - 1];
    return e;
}

}  // namespace

class TestMetrics : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emptyInputGivesZeros() {
        const ForecastMetrics m = compute_metrics({}, BinScheme::gfV2());
        QCOMPARE(m.n, int64_t{0});
        QCOMPARE(m.accuracy, 0.0);
        QCOMPARE(m.brier, 0.0);
        QCOMPARE(m.nll, 0.0);
        QCOMPARE(m.ece, 0.0);
        QCOMPARE(m.aurc, 0.0);
        QCOMPARE(m.kendall_tau_b, 0.0);
        QCOMPARE(m.top10_recovery, 0.0);
        QVERIFY(m.top10_recovery_per_pack.empty());
        QVERIFY(m.risk_coverage.empty());
        // The reliability table still lists every bucket, all empty, so a report has a fixed shape.
        QCOMPARE(m.reliability.size(), size_t{10});
        for (const auto& b : m.reliability)
            QCOMPARE(b.count, int64_t{0});
        QCOMPARE(metrics_json(m)["n"].get<int>(), 0);
        QCOMPARE(risk_coverage_csv(m), std::string("threshold,coverage,risk\n"));
    }

    void caseAByHand() {
        const ForecastMetrics m = compute_metrics(caseA(), BinScheme::gfV2());
        QCOMPARE(m.n, int64_t{2});
        COMPARE_NEAR(m.accuracy, 0.5);    // F1 only
        COMPARE_NEAR(m.off_by_one, 0.5);  // F2 is 5 bins off
        // Brier F1: (0.5-1)^2 + 0.5^2 = 0.5; F2: 0.25^2 + 0.75^2 + 1^2 = 1.625; mean 1.0625.
        COMPARE_NEAR(m.brier, 1.0625);
        // CRPS F1: CDF 0,0,0,0,0.5,1,1 vs 0,0,0,0,1,1,1 -> 0.25; F2: CDF 0.25,1,1,1,1,1,1 vs 0,0,0,0,0,0,1
        // -> 0.0625 + 5 = 5.0625; mean of the sums / 7 = 5.3125 / 14.
        COMPARE_NEAR(m.crps, 5.3125 / 14);
        // NLL F1: -ln 0.5; F2: p(bin 7) = 0 -> floor 1e-12 -> 12 ln 10.
        COMPARE_NEAR(m.nll, (std::log(2.0) + 12 * std::log(10.0)) / 2);
        // ECE: bucket 4 (0.4,0.5] holds F1 (acc 1, conf 0.5); bucket 7 holds F2 (acc 0, conf 0.75).
        // 0.5 * 0.5 + 0.5 * 0.75 = 0.625.
        COMPARE_NEAR(m.ece, 0.625);
        // AURC: t = 0.75 covers F2 (risk 1) -> 0.5 * 1; t = 0.5 covers both (risk 0.5) -> 0.5 * 0.5. Sum 0.75.
        COMPARE_NEAR(m.aurc, 0.75);
        // Expected bins 5.5, 1.75 vs speedups 1.2, 3.0: the one pair is discordant.
        COMPARE_NEAR(m.kendall_tau_b, -1.0);
        // One pack of 2 -> top ceil(0.2) = 1: F1 (expected 5.5, speedup 1.2); best 3.0 -> 0.4.
        COMPARE_NEAR(m.top10_recovery, 0.4);
        COMPARE_NEAR(m.top10_recovery_per_pack.at("p"), 0.4);

        QCOMPARE(m.reliability[4].count, int64_t{1});
        COMPARE_NEAR(m.reliability[4].accuracy, 1.0);
        COMPARE_NEAR(m.reliability[4].mean_confidence, 0.5);
        QCOMPARE(m.reliability[7].count, int64_t{1});
        COMPARE_NEAR(m.reliability[7].accuracy, 0.0);
        COMPARE_NEAR(m.reliability[7].mean_confidence, 0.75);
        QCOMPARE(risk_coverage_csv(m), std::string("threshold,coverage,risk\n0.75,0.5,1\n0.5,1,0.5\n"));
    }

    void caseBByHand() {
        const ForecastMetrics m = compute_metrics(caseB(), BinScheme::gfV2());
        QCOMPARE(m.n, int64_t{4});
        COMPARE_NEAR(m.accuracy, 0.5);     // a and c; b shows the argmax tie goes to the lower bin (3, not 4)
        COMPARE_NEAR(m.off_by_one, 0.75);  // a 0, b 1, c 0, d 2
        // Brier a 0.25 + 0.25 = 0.5; b 0.5; c 0.8^2 + 4 * 0.2^2 = 0.8; d 4/64 + 2/16 + 1 = 1.1875.
        // Mean 2.9875 / 4 = 0.746875.
        COMPARE_NEAR(m.brier, 0.746875);
        // CRPS sums: a (truth 4) CDF(4) = 0.5 -> 0.25; b (truth 4) CDF(3) = 0.5 -> 0.25;
        // c (truth 1) CDF 0.2,0.4,0.6,0.8,1,1,1 vs all 1 -> 0.64+0.36+0.16+0.04 = 1.2;
        // d (truth 8) CDF 1/8,2/8,3/8,4/8,4/8,6/8,1 vs all 0 -> (1+4+9+16+16+36+64)/64 = 2.28125.
        // Total 3.98125 / 7 / 4.
        COMPARE_NEAR(m.crps, 3.98125 / 28);
        // NLL a ln 2, b ln 2, c ln 5, d p(bin 8) = 0 -> 12 ln 10.
        COMPARE_NEAR(m.nll, (2 * std::log(2.0) + std::log(5.0) + 12 * std::log(10.0)) / 4);
        // ECE: c's confidence 0.2 is the upper edge of bucket 1 (0.1,0.2]: |1 - 0.2| / 4 = 0.2.
        // d's 0.25 is in bucket 2: |0 - 0.25| / 4 = 0.0625. a, b in bucket 4: acc 0.5, conf 0.5 -> 0.
        COMPARE_NEAR(m.ece, 0.2625);
        QCOMPARE(m.reliability[1].count, int64_t{1});
        QCOMPARE(m.reliability[2].count, int64_t{1});
        QCOMPARE(m.reliability[4].count, int64_t{2});
        COMPARE_NEAR(m.reliability[4].accuracy, 0.5);
        // AURC with the tie at 0.5: a and b enter together. t = 0.5: coverage 0.5, risk 1/2 -> 0.25;
        // t = 0.25 (+d): coverage 0.75, risk 2/3 -> 0.25 * 2/3; t = 0.2 (+c): coverage 1, risk 2/4 -> 0.125.
        // Sum 13/24. (Taking a before b one at a time would give 0.125 for the first step instead.)
        COMPARE_NEAR(m.aurc, 13.0 / 24);
        QCOMPARE(m.risk_coverage.size(), size_t{3});
        COMPARE_NEAR(m.risk_coverage[0].threshold, 0.5);
        COMPARE_NEAR(m.risk_coverage[0].coverage, 0.5);
        COMPARE_NEAR(m.risk_coverage[0].risk, 0.5);
        COMPARE_NEAR(m.risk_coverage[1].threshold, 0.25);
        COMPARE_NEAR(m.risk_coverage[1].coverage, 0.75);
        COMPARE_NEAR(m.risk_coverage[1].risk, 2.0 / 3);
        COMPARE_NEAR(m.risk_coverage[2].threshold, 0.2);
        COMPARE_NEAR(m.risk_coverage[2].coverage, 1.0);
        COMPARE_NEAR(m.risk_coverage[2].risk, 0.5);
        // Kendall: x = 4.5, 3.5, 3, 4.5; y = 0.9, 0.9, 0.2, 5.0. Pairs: (a,b) tied in y; (a,d) tied in x; the other
        // four concordant. tau-b = 4 / sqrt((6-1)(6-1)) = 0.8.
        COMPARE_NEAR(m.kendall_tau_b, 0.8);
        // Top 10%: ceil(0.4) = 1 of the pack. a and d share the top expected bin 4.5; the pessimistic tie-break
        // takes a (speedup 0.9) before d (5.0): 0.9 / 5.0 = 0.18 rather than 1.
        COMPARE_NEAR(m.top10_recovery, 0.18);
    }

    void climatologyAndSkillByHand() {
        // Case A: true bins 5 and 7, so climatology is 0.5/0.5 on bins 5 and 7.
        // Its Brier per item: 0.5^2 + 0.5^2 = 0.5. Its CRPS: CDF 0,0,0,0,0.5,0.5,1; truth 5 -> 0.25+0.25+0 = 0.5,
        // truth 7 -> 0.25+0.25+0 = 0.5; mean 0.5 / 7.
        ForecastMetrics m = compute_metrics(caseA(), BinScheme::gfV2());
        COMPARE_NEAR(m.majority_accuracy, 0.5);
        COMPARE_NEAR(m.brier_climatology, 0.5);
        COMPARE_NEAR(m.brier_skill, 1 - 1.0625 / 0.5);
        COMPARE_NEAR(m.crps_climatology, 0.5 / 7);
        COMPARE_NEAR(m.crps_skill, 1 - (5.3125 / 14) / (0.5 / 7));
        // Case B: true bins 4, 4, 1, 8: climatology 0.25 / 0.5 / 0.25 on bins 1, 4, 8.
        // Brier per item: 1 - (0.25^2 + 0.5^2 + 0.25^2) on average = 0.625.
        // CRPS: CDF 0.25,0.25,0.25,0.75,0.75,0.75,0.75; truth 4 -> 3*0.0625 + 4*0.0625 = 0.4375 (twice);
        // truth 1 -> 3*0.5625 + 4*0.0625 = 1.9375; truth 8 -> 3*0.0625 + 4*0.5625 = 2.4375; total 5.25 / 7 / 4.
        m = compute_metrics(caseB(), BinScheme::gfV2());
        COMPARE_NEAR(m.majority_accuracy, 0.5);
        COMPARE_NEAR(m.brier_climatology, 0.625);
        COMPARE_NEAR(m.brier_skill, 1 - 0.746875 / 0.625);  // worse than climatology on Brier ...
        COMPARE_NEAR(m.crps_climatology, 5.25 / 28);
        COMPARE_NEAR(m.crps_skill, 1 - 3.98125 / 5.25);  // ... better on the ordered score
        const nlohmann::json j = metrics_json(m)["metrics"];
        COMPARE_NEAR(j["brier_skill"].get<double>(), m.brier_skill);
        COMPARE_NEAR(j["crps_climatology"].get<double>(), 5.25 / 28);
        COMPARE_NEAR(j["majority_accuracy"].get<double>(), 0.5);
    }

    void repeatingTheCommonBinShowsNoSkill() {
        // Nine of ten candidates are extreme speedups: answering "bin 8" always is 90% accurate and carries nothing.
        std::vector<ScoredForecast> always8, climatology;
        for (int i = 0; i < 10; ++i) {
            const double speedup = i == 0 ? 0.9 : 5.0;
            always8.push_back(scored(probs({{8, 1.0}}), speedup));
            climatology.push_back(scored(probs({{4, 0.1}, {8, 0.9}}), speedup));
        }
        const ForecastMetrics a = compute_metrics(always8, BinScheme::gfV2());
        COMPARE_NEAR(a.accuracy, 0.9);
        COMPARE_NEAR(a.majority_accuracy, 0.9);
        // Brier 2/10 = 0.2 against climatology's 1 - 0.81 - 0.01 = 0.18: skill -1/9.
        COMPARE_NEAR(a.brier, 0.2);
        COMPARE_NEAR(a.brier_climatology, 0.18);
        COMPARE_NEAR(a.brier_skill, -1.0 / 9);
        QVERIFY(a.crps_skill < 0);
        const ForecastMetrics c = compute_metrics(climatology, BinScheme::gfV2());
        COMPARE_NEAR(c.brier_skill, 0.0);
        COMPARE_NEAR(c.crps_skill, 0.0);
    }

    void skillIsUndefinedWhenEveryOutcomeSharesABin() {
        // Climatology is then perfect (Brier 0): no skill score can be formed, and JSON says null rather than 0 or 1.
        const std::vector<ScoredForecast> f{scored(probs({{8, 1.0}}), 5.0), scored(probs({{7, 1.0}}), 6.0)};
        const ForecastMetrics m = compute_metrics(f, BinScheme::gfV2());
        COMPARE_NEAR(m.majority_accuracy, 1.0);
        COMPARE_NEAR(m.brier_climatology, 0.0);
        QVERIFY(std::isnan(m.brier_skill));
        QVERIFY(std::isnan(m.crps_skill));
        QVERIFY(metrics_json(m)["metrics"]["brier_skill"].is_null());
        QVERIFY(metrics_json(m)["metrics"]["crps_skill"].is_null());
        QVERIFY(std::isnan(skill_score(0.1, 0.0)));
        QCOMPARE(skill_text(m.brier_skill), std::string("n/a"));
        QCOMPARE(skill_text(metrics_json(m)["metrics"]["crps_skill"]), std::string("n/a"));
        QCOMPARE(skill_text(-1.0 / 9), std::string("-0.111"));
        QCOMPARE(skill_text(nlohmann::json(0.25)), std::string("+0.250"));
        COMPARE_NEAR(skill_score(0.1, 0.4), 0.75);
    }

    void perfectForecasterScoresPerfectly() {
        // One-hot on the true bin: nothing to lose anywhere.
        std::vector<ScoredForecast> f{scored(probs({{1, 1.0}}), 0.2), scored(probs({{4, 1.0}}), 0.9),
                                      scored(probs({{8, 1.0}}), 5.0)};
        const ForecastMetrics m = compute_metrics(f, BinScheme::gfV2());
        COMPARE_NEAR(m.accuracy, 1.0);
        COMPARE_NEAR(m.off_by_one, 1.0);
        COMPARE_NEAR(m.brier, 0.0);
        COMPARE_NEAR(m.crps, 0.0);
        COMPARE_NEAR(m.nll, 0.0);
        COMPARE_NEAR(m.ece, 0.0);
        QCOMPARE(m.reliability[9].count, int64_t{3});
        COMPARE_NEAR(m.aurc, 0.0);
        QCOMPARE(m.risk_coverage.size(), size_t{1});  // one distinct confidence
        COMPARE_NEAR(m.kendall_tau_b, 1.0);
        COMPARE_NEAR(m.top10_recovery, 1.0);
    }

    void schemeDecidesTheTrueBin() {
        // Speedup 0.6 is bin 3 under gf-v2 but bin 1 under a scheme whose first edge is 0.7.
        const BinScheme wide("wide", {0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3}, {"a", "b", "c", "d", "e", "f", "g", "h"});
        const std::vector<ScoredForecast> f{scored(probs({{3, 1.0}}), 0.6)};
        COMPARE_NEAR(compute_metrics(f, BinScheme::gfV2()).accuracy, 1.0);
        COMPARE_NEAR(compute_metrics(f, wide).accuracy, 0.0);
        COMPARE_NEAR(compute_metrics(f, wide).off_by_one, 0.0);  // predicted 3, true 1
    }

    void reliabilityBucketEdges_data() {
        QTest::addColumn<double>("confidence");
        QTest::addColumn<int>("bucket");
        QTest::newRow("0 is in bucket 0") << 0.0 << 0;
        QTest::newRow("0.05") << 0.05 << 0;
        QTest::newRow("0.1 is the upper edge of bucket 0") << 0.1 << 0;
        QTest::newRow("just above 0.1") << std::nextafter(0.1, 1.0) << 1;
        QTest::newRow("0.2 is the upper edge of bucket 1") << 0.2 << 1;
        QTest::newRow("just above 0.2") << std::nextafter(0.2, 1.0) << 2;
        QTest::newRow("0.3") << 0.3 << 2;
        QTest::newRow("0.1 + 0.2 (just above 0.3)") << 0.1 + 0.2 << 3;
        QTest::newRow("0.7") << 0.7 << 6;
        QTest::newRow("0.9") << 0.9 << 8;
        QTest::newRow("1 is in bucket 9") << 1.0 << 9;
        QTest::newRow("a sum within tolerance above 1") << 1.0000005 << 9;
    }
    void reliabilityBucketEdges() {
        QFETCH(double, confidence);
        QFETCH(int, bucket);
        QCOMPARE(reliability_bucket_of(confidence), bucket);
    }

    void top10TakesTheCeilingOfATenthPerPack() {
        std::vector<ScoredForecast> f;
        // Pack "eleven": ceil(1.1) = 2 are taken: expected bins 8 (speedup 1.5) and 7 (3.0); best in the pack is 6.0
        // (ranked last, expected bin 1) -> 3.0 / 6.0 = 0.5. Taking only one would give 0.25.
        f.push_back(scored(probs({{8, 1.0}}), 1.5, "eleven"));
        f.push_back(scored(probs({{7, 1.0}}), 3.0, "eleven"));
        for (int i = 0; i < 8; ++i)
            f.push_back(scored(probs({{1, 1.0}}), 0.5, "eleven"));
        f.push_back(scored(probs({{1, 1.0}}), 6.0, "eleven"));
        // Pack "ten": ceil(1.0) = 1: expected bin 8 (speedup 2.0); best 4.0 -> 0.5.
        f.push_back(scored(probs({{8, 1.0}}), 2.0, "ten"));
        f.push_back(scored(probs({{7, 1.0}}), 4.0, "ten"));
        for (int i = 0; i < 8; ++i)
            f.push_back(scored(probs({{1, 1.0}}), 0.1, "ten"));
        // Pack "one": its only forecast is its best -> 1.
        f.push_back(scored(probs({{2, 1.0}}), 0.3, "one"));
        const ForecastMetrics m = compute_metrics(f, BinScheme::gfV2());
        QCOMPARE(m.top10_recovery_per_pack.size(), size_t{3});
        COMPARE_NEAR(m.top10_recovery_per_pack.at("eleven"), 0.5);
        COMPARE_NEAR(m.top10_recovery_per_pack.at("ten"), 0.5);
        COMPARE_NEAR(m.top10_recovery_per_pack.at("one"), 1.0);
        // Mean over packs, not over forecasts: (0.5 + 0.5 + 1) / 3.
        COMPARE_NEAR(m.top10_recovery, 2.0 / 3);
        const auto j = metrics_json(m);
        COMPARE_NEAR(j["per_pack_top10"]["eleven"].get<double>(), 0.5);
    }

    void kendallMatchesBruteForceWithTies() {
        std::mt19937 rng(20240611);
        for (int round = 0; round < 20; ++round) {
            // Few distinct values on both sides so ties in x, in y and in both are common.
            std::uniform_int_distribution<int> xs(0, 3 + round), ys(1, 2 + round % 5);
            std::vector<double> x(200), y(200);
            for (size_t i = 0; i < x.size(); ++i) {
                x[i] = xs(rng) * 0.25;
                y[i] = ys(rng) * 0.3;
            }
            COMPARE_NEAR(kendall_tau_b(x, y), bruteForceTauB(x, y));
        }
    }

    void kendallInMetricsUsesExpectedBinAgainstSpeedup() {
        // Forecasts mixing two bins with dyadic weights give many exactly equal expected bins; speedups from a
        // small set give ties on the other side.
        std::mt19937 rng(7);
        std::uniform_int_distribution<int> bin(1, 8), weight(0, 4), speed(1, 12);
        std::vector<ScoredForecast> f;
        std::vector<double> expected, speedups;
        for (int i = 0; i < 200; ++i) {
            const double w = weight(rng) * 0.25;
            Probabilities p{};
            p[bin(rng) - 1] += w;
            p[bin(rng) - 1] += 1 - w;
            f.push_back(scored(p, speed(rng) * 0.4));
            expected.push_back(expectedBinOf(p));
            speedups.push_back(f.back().true_speedup);
        }
        const double tau = compute_metrics(f, BinScheme::gfV2()).kendall_tau_b;
        COMPARE_NEAR(tau, bruteForceTauB(expected, speedups));
        QVERIFY(tau != 0);
    }

    void kendallEdgeCases() {
        QCOMPARE(kendall_tau_b({}, {}), 0.0);
        QCOMPARE(kendall_tau_b({1.0}, {2.0}), 0.0);
        QCOMPARE(kendall_tau_b({1, 2, 3}, {5, 5, 5}), 0.0);  // constant y
        QCOMPARE(kendall_tau_b({4, 4, 4}, {1, 2, 3}), 0.0);  // constant x
        // x = 1,2,2,3 and y = 1,2,3,3: pairs (2,3) tied in x, (3,4) tied in y, four concordant.
        // tau-b = 4 / sqrt(5 * 5).
        COMPARE_NEAR(kendall_tau_b({1, 2, 2, 3}, {1, 2, 3, 3}), 0.8);
        COMPARE_NEAR(kendall_tau_b({1, 2, 3}, {3, 2, 1}), -1.0);
        QCOMPARE(errorOf([] {
                     kendall_tau_b({1, 2}, {1});
                 }),
                 std::string("kendall tau-b: the samples differ in size (2 and 1)"));
        QCOMPARE(errorOf([] {
                     kendall_tau_b({1, std::nan("")}, {1, 2});
                 }),
                 std::string("kendall tau-b: value at index 1 is not finite"));
    }

    void kendallIsFastOnLargeInputs() {
        // 100k items with heavy ties: monotone gives 1, reversed gives -1; O(n^2) would take far too long here.
        const size_t n = 100000;
        std::vector<double> x(n), y(n), reversed(n);
        for (size_t i = 0; i < n; ++i) {
            x[i] = static_cast<double>(i / 7);
            y[i] = static_cast<double>(i / 7) * 0.5;
            reversed[i] = -y[i];
        }
        const auto start = std::chrono::steady_clock::now();
        COMPARE_NEAR(kendall_tau_b(x, y), 1.0);
        COMPARE_NEAR(kendall_tau_b(x, reversed), -1.0);
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    }

    void invalidInputsNameTheIndex_data() {
        QTest::addColumn<int>("bin");  // 0: change the speedup instead
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("message");
        const double inf = std::numeric_limits<double>::infinity();
        QTest::newRow("negative probability")
            << 3 << -0.25
            << "forecast at index 2: probability of bin 3 is -0.25; expected a finite non-negative number";
        QTest::newRow("NaN probability")
            << 1 << std::nan("")
            << "forecast at index 2: probability of bin 1 is nan; expected a finite non-negative number";
        QTest::newRow("infinite probability")
            << 2 << inf << "forecast at index 2: probability of bin 2 is inf; expected a finite non-negative number";
        QTest::newRow("does not sum to 1")
            << 1 << 0.4
            << "forecast at index 2: probabilities sum to 0.9; expected 1 within 1e-6 (renormalise the "
               "forecast first)";
        QTest::newRow("zero speedup")
            << 0 << 0.0 << "forecast at index 2: measured speedup is 0; expected a positive finite number";
        QTest::newRow("negative speedup")
            << 0 << -1.5 << "forecast at index 2: measured speedup is -1.5; expected a positive finite number";
        QTest::newRow("infinite speedup")
            << 0 << inf << "forecast at index 2: measured speedup is inf; expected a positive finite number";
        QTest::newRow("NaN speedup")
            << 0 << std::nan("") << "forecast at index 2: measured speedup is nan; expected a positive finite number";
    }
    void invalidInputsNameTheIndex() {
        QFETCH(int, bin);
        QFETCH(double, value);
        QFETCH(QString, message);
        std::vector<ScoredForecast> f = caseA();
        f.push_back(scored(probs({{1, 0.5}, {2, 0.25}, {3, 0.25}}), 1.0));
        if (bin == 0)
            f[2].true_speedup = value;
        else
            f[2].probabilities[bin - 1] = value;
        QCOMPARE(QString::fromStdString(errorOf([&] { compute_metrics(f, BinScheme::gfV2()); })), message);
    }

    void sumWithinToleranceIsAccepted() {
        std::vector<ScoredForecast> f{scored(probs({{1, 0.5}, {2, 0.5 + 5e-7}}), 0.4)};
        COMPARE_NEAR(compute_metrics(f, BinScheme::gfV2()).accuracy, 1.0);  // bin 2 wins, speedup 0.4 is bin 2
        f[0].probabilities[1] = 0.5 + 2e-6;
        QVERIFY(errorOf([&] { compute_metrics(f, BinScheme::gfV2()); }).find("index 0") != std::string::npos);
    }

    void jsonAndCsvTables() {
        const ForecastMetrics m = compute_metrics(caseA(), BinScheme::gfV2());
        const nlohmann::json j = metrics_json(m);
        QCOMPARE(j["n"].get<int>(), 2);
        QCOMPARE(j["metrics"].size(), size_t{14});
        for (const char* key :
             {"accuracy", "off_by_one", "brier", "crps", "nll", "ece", "aurc", "kendall_tau_b", "top10_recovery",
              "majority_accuracy", "brier_climatology", "brier_skill", "crps_climatology", "crps_skill"})
            QVERIFY2(j["metrics"].contains(key), key);
        COMPARE_NEAR(j["metrics"]["aurc"].get<double>(), 0.75);
        COMPARE_NEAR(j["per_pack_top10"]["p"].get<double>(), 0.4);

        const nlohmann::json reliability = reliability_json(m);
        QCOMPARE(reliability.size(), size_t{10});
        QCOMPARE(reliability[7]["count"].get<int>(), 1);
        COMPARE_NEAR(reliability[7]["lower"].get<double>(), 0.7);
        COMPARE_NEAR(reliability[7]["mean_confidence"].get<double>(), 0.75);
        const nlohmann::json curve = risk_coverage_json(m);
        QCOMPARE(curve.size(), size_t{2});
        COMPARE_NEAR(curve[1]["risk"].get<double>(), 0.5);

        QCOMPARE(reliability_csv(m), std::string("lower,upper,count,accuracy,mean_confidence\n"
                                                 "0,0.1,0,0,0\n"
                                                 "0.1,0.2,0,0,0\n"
                                                 "0.2,0.3,0,0,0\n"
                                                 "0.3,0.4,0,0,0\n"
                                                 "0.4,0.5,1,1,0.5\n"
                                                 "0.5,0.6,0,0,0\n"
                                                 "0.6,0.7,0,0,0\n"
                                                 "0.7,0.8,1,0,0.75\n"
                                                 "0.8,0.9,0,0,0\n"
                                                 "0.9,1,0,0,0\n"));
    }

    void valuesWithin1e9AreTies() {
        // Two forecasts with equal confidence, one right and one wrong, plus a confident right one. When the second
        // confidence is higher by 1e-12 (what renormalising a stored vector again can do), it must still tie: the
        // split would let the wrong one enter first and raise AURC from 2/9 to 5/18, and turn the tied pair into a
        // discordant one for Kendall's tau-b.
        auto make = [](double shift) {
            ScoredForecast right{{0, 0, 0, 0.6, 0.4, 0, 0, 0}, 0.9, "p"};                  // bin 4, true bin 4
            ScoredForecast wrong{{0, 0, 0, 0.6 + shift, 0.4 - shift, 0, 0, 0}, 1.7, "p"};  // bin 4, true bin 6
            ScoredForecast sure{{0, 0, 0, 0, 0.9, 0.1, 0, 0}, 1.2, "p"};                   // bin 5, true bin 5
            return std::vector<ScoredForecast>{right, wrong, sure};
        };
        const ForecastMetrics tied = compute_metrics(make(0), BinScheme::gfV2());
        const ForecastMetrics near = compute_metrics(make(1e-12), BinScheme::gfV2());
        QCOMPARE(tied.aurc, 2.0 / 9.0);
        QCOMPARE(near.aurc, tied.aurc);
        QCOMPARE(near.kendall_tau_b, tied.kendall_tau_b);
        QCOMPARE(near.risk_coverage.size(), tied.risk_coverage.size());
        // A real difference (1e-6) is not a tie.
        QVERIFY(compute_metrics(make(1e-6), BinScheme::gfV2()).aurc > tied.aurc);
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
