#include "core/metrics.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace kerncast {

namespace {

constexpr int kReliabilityBuckets = 10;
constexpr double kSumTolerance = 1e-6;
constexpr double kProbabilityFloor = 1e-12;  // keeps nll finite when the true bin got probability 0
constexpr double kTieTolerance = 1e-9;       // values this close are ties in AURC, Kendall's tau-b and top-k

std::string format_number(double v, const char* format = "%.10g") {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// A header line of the columns, then one line per JSON row with those keys.
std::string csv_table(const nlohmann::json& rows, const std::vector<std::string>& columns) {
    std::string out;
    for (size_t c = 0; c < columns.size(); ++c)
        out += (c ? "," : "") + columns[c];
    out += '\n';
    for (const auto& row : rows) {
        for (size_t c = 0; c < columns.size(); ++c)
            out += (c ? "," : "") + format_number(row.at(columns[c]).get<double>(), "%.12g");
        out += '\n';
    }
    return out;
}

void validate(const std::vector<ScoredForecast>& forecasts) {
    for (size_t i = 0; i < forecasts.size(); ++i) {
        const ScoredForecast& f = forecasts[i];
        const std::string where = "forecast at index " + std::to_string(i);
        double sum = 0;
        for (size_t b = 0; b < f.probabilities.size(); ++b) {
            const double p = f.probabilities[b];
            if (!std::isfinite(p) || p < 0)
                throw Error(where + ": probability of bin " + std::to_string(b + 1) + " is " + format_number(p) +
                            "; expected a finite non-negative number");
            sum += p;
        }
        if (std::abs(sum - 1.0) > kSumTolerance)
            throw Error(where + ": probabilities sum to " + format_number(sum) +
                        "; expected 1 within 1e-6 (renormalise the forecast first)");
        if (!std::isfinite(f.true_speedup) || f.true_speedup <= 0)
            throw Error(where + ": measured speedup is " + format_number(f.true_speedup) +
                        "; expected a positive finite number");
    }
}

// Argmax with ties to the lower bin; returns 1..8.
int predicted_bin(const std::array<double, kBinCount>& p) {
    int best = 0;
    for (int b = 1; b < kBinCount; ++b)
        if (p[b] > p[best])
            best = b;
    return best + 1;
}

// Same summation order as Forecast::expectedBin, so equal inputs give bit-equal ties.
double expected_bin(const std::array<double, kBinCount>& p) {
    double e = 0;
    for (size_t i = 0; i < p.size(); ++i)
        e += static_cast<double>(i + 1) * p[i];
    return e;
}

int64_t tied_pairs(int64_t run) { return run * (run - 1) / 2; }

// Sorts v ascending (stable) and returns the number of pairs i < j with v[i] > v[j] strictly.
int64_t sort_counting_inversions(std::vector<double>& v) {
    const size_t n = v.size();
    std::vector<double> buffer(n);
    int64_t inversions = 0;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            const size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
            size_t i = lo, j = mid, out = lo;
            while (i < mid && j < hi) {
                if (v[i] <= v[j]) {  // equal values are ties, not inversions
                    buffer[out++] = v[i++];
                } else {
                    inversions += static_cast<int64_t>(mid - i);
                    buffer[out++] = v[j++];
                }
            }
            while (i < mid)
                buffer[out++] = v[i++];
            while (j < hi)
                buffer[out++] = v[j++];
        }
        v.swap(buffer);
    }
    return inversions;
}

// Recovery of one pack: the best true speedup among the top ceil(n/10) by expected bin, over the pack's best. Among
// equal expected bins the lower true speedup ranks first, so ties never flatter the surrogate.
double pack_top10_recovery(std::vector<std::pair<double, double>> expected_and_speedup) {
    std::sort(expected_and_speedup.begin(), expected_and_speedup.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first)
            return a.first > b.first;
        return a.second < b.second;
    });
    const size_t take = (expected_and_speedup.size() + 9) / 10;
    double best_taken = 0, best = 0;
    for (size_t i = 0; i < expected_and_speedup.size(); ++i) {
        best = std::max(best, expected_and_speedup[i].second);
        if (i < take)
            best_taken = std::max(best_taken, expected_and_speedup[i].second);
    }
    return best_taken / best;
}

// Values that agree to 1e-9 are one value: a stored forecast read back (or summed in another order) can differ in
// its last bits from an equal one, and that must not split a tie in AURC, Kendall's tau-b or the top-k ranking.
// Each run of values within 1e-9 of its smallest member takes that member's value.
void merge_near_ties(std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    for (size_t i = 0; i < order.size();) {
        const double anchor = v[order[i]];
        size_t j = i + 1;
        for (; j < order.size() && v[order[j]] - anchor <= kTieTolerance; ++j)
            v[order[j]] = anchor;
        i = j;
    }
}

}  // namespace

double brier_score(const std::array<double, kBinCount>& p, int truth) {
    double squares = 0;
    for (int b = 1; b <= kBinCount; ++b) {
        const double y = b == truth ? 1.0 : 0.0;
        squares += (p[b - 1] - y) * (p[b - 1] - y);
    }
    return squares;
}

double ranked_probability_score(const std::array<double, kBinCount>& p, int truth) {
    double cdf_p = 0, sum = 0;
    for (int b = 1; b < kBinCount; ++b) {  // F(8) is 1 on both sides
        cdf_p += p[b - 1];
        const double cdf_y = b >= truth ? 1.0 : 0.0;
        sum += (cdf_p - cdf_y) * (cdf_p - cdf_y);
    }
    return sum / (kBinCount - 1);
}

double skill_score(double score, double baseline) {
    return baseline > 0 ? 1.0 - score / baseline : std::numeric_limits<double>::quiet_NaN();
}

std::string skill_text(double skill) { return std::isfinite(skill) ? format_number(skill, "%+.3f") : "n/a"; }

std::string skill_text(const nlohmann::json& skill) {
    return skill.is_number() ? skill_text(skill.get<double>()) : "n/a";
}

namespace {

// The set's own true-bin frequencies as everyone's forecast: its Brier and CRPS, and the majority bin's accuracy.
void add_climatology(const std::vector<int>& truths, ForecastMetrics& m) {
    std::array<double, kBinCount> climatology{};
    for (int t : truths)
        climatology[t - 1] += 1;
    const double total = static_cast<double>(truths.size());
    m.majority_accuracy = *std::max_element(climatology.begin(), climatology.end()) / total;
    for (double& q : climatology)
        q /= total;
    double brier = 0, crps = 0;
    for (int t : truths) {
        brier += brier_score(climatology, t);
        crps += ranked_probability_score(climatology, t);
    }
    m.brier_climatology = brier / total;
    m.crps_climatology = crps / total;
    m.brier_skill = skill_score(m.brier, m.brier_climatology);
    m.crps_skill = skill_score(m.crps, m.crps_climatology);
}

}  // namespace

int reliability_bucket_of(double confidence) {
    // Compare with the edges themselves rather than trust ceil(c * 10): the definition is in terms of k/10.0.
    int k = 0;
    while (k < kReliabilityBuckets - 1 && confidence > (k + 1) / static_cast<double>(kReliabilityBuckets))
        ++k;
    return k;
}

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size())
        throw Error("kendall tau-b: the samples differ in size (" + std::to_string(x.size()) + " and " +
                    std::to_string(y.size()) + ")");
    const size_t n = x.size();
    for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
            throw Error("kendall tau-b: value at index " + std::to_string(i) + " is not finite");
    if (n < 2)
        return 0;

    // Knight's algorithm: sort by (x, y); pairs tied in x and in both come from runs; the discordant pairs are the
    // strict inversions left in y; pairs tied in y come from runs once y is sorted.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (x[a] != x[b])
            return x[a] < x[b];
        return y[a] < y[b];
    });
    int64_t tied_x = 0, tied_xy = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && x[order[j]] == x[order[i]])
            ++j;
        tied_x += tied_pairs(static_cast<int64_t>(j - i));
        for (size_t k = i; k < j;) {
            size_t m = k;
            while (m < j && y[order[m]] == y[order[k]])
                ++m;
            tied_xy += tied_pairs(static_cast<int64_t>(m - k));
            k = m;
        }
        i = j;
    }
    std::vector<double> ys(n);
    for (size_t i = 0; i < n; ++i)
        ys[i] = y[order[i]];
    const int64_t discordant = sort_counting_inversions(ys);
    int64_t tied_y = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && ys[j] == ys[i])
            ++j;
        tied_y += tied_pairs(static_cast<int64_t>(j - i));
        i = j;
    }
    const int64_t pairs = tied_pairs(static_cast<int64_t>(n));
    if (tied_x == pairs || tied_y == pairs)
        return 0;
    const int64_t concordant_minus_discordant = pairs - tied_x - tied_y + tied_xy - 2 * discordant;
    return static_cast<double>(concordant_minus_discordant) /
           (std::sqrt(static_cast<double>(pairs - tied_x)) * std::sqrt(static_cast<double>(pairs - tied_y)));
}

ForecastMetrics compute_metrics(const std::vector<ScoredForecast>& forecasts, const BinScheme& scheme) {
    validate(forecasts);
    ForecastMetrics m;
    m.n = static_cast<int64_t>(forecasts.size());
    m.reliability.resize(kReliabilityBuckets);
    for (int k = 0; k < kReliabilityBuckets; ++k) {
        m.reliability[k].lower = k / static_cast<double>(kReliabilityBuckets);
        m.reliability[k].upper = (k + 1) / static_cast<double>(kReliabilityBuckets);
    }
    if (forecasts.empty())
        return m;

    const size_t n = forecasts.size();
    std::vector<double> confidence(n), expected(n), speedup(n);
    std::vector<bool> correct(n);
    std::vector<int> truths(n);
    std::map<std::string, std::vector<std::pair<double, double>>> packs;
    double accurate = 0, near = 0, brier = 0, crps = 0, nll = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto& p = forecasts[i].probabilities;
        const int truth = forecasts[i].true_bin >= 1 && forecasts[i].true_bin <= kBinCount
                              ? forecasts[i].true_bin
                              : scheme.binOf(forecasts[i].true_speedup);
        const int predicted = predicted_bin(p);
        confidence[i] = p[predicted - 1];
        expected[i] = expected_bin(p);
        speedup[i] = forecasts[i].true_speedup;
        correct[i] = predicted == truth;
        accurate += correct[i] ? 1 : 0;
        near += std::abs(predicted - truth) <= 1 ? 1 : 0;

        truths[i] = truth;
        brier += brier_score(p, truth);
        crps += ranked_probability_score(p, truth);
        nll += -std::log(std::max(p[truth - 1], kProbabilityFloor));

        ReliabilityBucket& bucket = m.reliability[reliability_bucket_of(confidence[i])];
        ++bucket.count;
        bucket.accuracy += correct[i] ? 1 : 0;  // sums for now, means below
        bucket.mean_confidence += confidence[i];
    }
    merge_near_ties(confidence);
    merge_near_ties(expected);
    for (size_t i = 0; i < n; ++i)
        packs[forecasts[i].pack].emplace_back(expected[i], speedup[i]);
    const double total = static_cast<double>(n);
    m.accuracy = accurate / total;
    m.off_by_one = near / total;
    m.brier = brier / total;
    m.crps = crps / total;
    m.nll = nll / total;
    add_climatology(truths, m);

    for (ReliabilityBucket& bucket : m.reliability) {
        if (bucket.count == 0)
            continue;
        bucket.accuracy /= static_cast<double>(bucket.count);
        bucket.mean_confidence /= static_cast<double>(bucket.count);
        m.ece += static_cast<double>(bucket.count) / total * std::abs(bucket.accuracy - bucket.mean_confidence);
    }

    // Risk-coverage: every distinct confidence is a threshold, so forecasts with equal confidence enter together.
    std::vector<size_t> by_confidence(n);
    std::iota(by_confidence.begin(), by_confidence.end(), size_t{0});
    std::sort(by_confidence.begin(), by_confidence.end(),
              [&](size_t a, size_t b) { return confidence[a] > confidence[b]; });
    int64_t selected = 0, errors = 0;
    double previous_coverage = 0;
    for (size_t i = 0; i < n;) {
        const double threshold = confidence[by_confidence[i]];
        for (; i < n && confidence[by_confidence[i]] == threshold; ++i) {
            ++selected;
            errors += correct[by_confidence[i]] ? 0 : 1;
        }
        RiskCoveragePoint point;
        point.threshold = threshold;
        point.coverage = static_cast<double>(selected) / total;
        point.risk = static_cast<double>(errors) / static_cast<double>(selected);
        m.aurc += (point.coverage - previous_coverage) * point.risk;
        previous_coverage = point.coverage;
        m.risk_coverage.push_back(point);
    }

    m.kendall_tau_b = kendall_tau_b(expected, speedup);

    double recovery_sum = 0;
    for (auto& [pack, items] : packs) {
        const double recovery = pack_top10_recovery(std::move(items));
        m.top10_recovery_per_pack[pack] = recovery;
        recovery_sum += recovery;
    }
    m.top10_recovery = recovery_sum / static_cast<double>(packs.size());
    return m;
}

namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json metrics_json(const ForecastMetrics& metrics) {
    nlohmann::json per_pack = nlohmann::json::object();
    for (const auto& [pack, recovery] : metrics.top10_recovery_per_pack)
        per_pack[pack] = recovery;
    return {{"n", metrics.n},
            {"metrics",
             {{"accuracy", metrics.accuracy},
              {"off_by_one", metrics.off_by_one},
              {"brier", metrics.brier},
              {"crps", metrics.crps},
              {"nll", metrics.nll},
              {"ece", metrics.ece},
              {"aurc", metrics.aurc},
              {"kendall_tau_b", metrics.kendall_tau_b},
              {"top10_recovery", metrics.top10_recovery},
              {"majority_accuracy", metrics.majority_accuracy},
              {"brier_climatology", metrics.brier_climatology},
              {"brier_skill", finite_or_null(metrics.brier_skill)},
              {"crps_climatology", metrics.crps_climatology},
              {"crps_skill", finite_or_null(metrics.crps_skill)}}},
            {"per_pack_top10", per_pack}};
}

nlohmann::json reliability_json(const ForecastMetrics& metrics) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ReliabilityBucket& b : metrics.reliability)
        rows.push_back({{"lower", b.lower},
                        {"upper", b.upper},
                        {"count", b.count},
                        {"accuracy", b.accuracy},
                        {"mean_confidence", b.mean_confidence}});
    return rows;
}

nlohmann::json risk_coverage_json(const ForecastMetrics& metrics) {
    nlohmann::json rows = nlohmann::json::array();
    for (const RiskCoveragePoint& p : metrics.risk_coverage)
        rows.push_back({{"threshold", p.threshold}, {"coverage", p.coverage}, {"risk", p.risk}});
    return rows;
}

std::string reliability_csv(const ForecastMetrics& metrics) {
    return csv_table(reliability_json(metrics), {"lower", "upper", "count", "accuracy", "mean_confidence"});
}

std::string risk_coverage_csv(const ForecastMetrics& metrics) {
    return csv_table(risk_coverage_json(metrics), {"threshold", "coverage", "risk"});
}

}  // namespace kerncast
