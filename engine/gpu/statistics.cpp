#include "engine/gpu/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kerncast::stats {

namespace {

// splitmix64: a tiny, well-distributed generator; the bootstrap needs reproducibility, not cryptography.
uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double percentile_sorted(const std::vector<double>& sorted, double p) {
    if (sorted.empty())
        return 0;
    const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = rank - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double median(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    return percentile_sorted(samples, 50);
}

double mean(const std::vector<double>& samples) {
    if (samples.empty())
        return 0;
    return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(const std::vector<double>& samples) {
    if (samples.size() < 2)
        return 0;
    const double m = mean(samples);
    double ss = 0;
    for (double x : samples)
        ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(samples.size() - 1));
}

double percentile(std::vector<double> samples, double p) {
    std::sort(samples.begin(), samples.end());
    return percentile_sorted(samples, p);
}

double rel_std_error(const std::vector<double>& samples) {
    if (samples.size() < 2)
        return std::numeric_limits<double>::infinity();
    const double m = mean(samples);
    if (m == 0)
        return std::numeric_limits<double>::infinity();
    return stddev(samples) / std::sqrt(static_cast<double>(samples.size())) / std::abs(m);
}

Interval bootstrap_median_ci(const std::vector<double>& samples, double confidence, int resamples, uint64_t seed) {
    if (samples.empty())
        return {};
    if (samples.size() == 1)
        return {samples[0], samples[0]};
    const size_t n = samples.size();
    std::vector<double> medians;
    medians.reserve(static_cast<size_t>(std::max(resamples, 1)));
    std::vector<double> draw(n);
    uint64_t state = seed;
    for (int r = 0; r < std::max(resamples, 1); ++r) {
        for (size_t i = 0; i < n; ++i)
            draw[i] = samples[splitmix64(state) % n];
        std::sort(draw.begin(), draw.end());
        medians.push_back(percentile_sorted(draw, 50));
    }
    std::sort(medians.begin(), medians.end());
    const double tail = (1.0 - std::clamp(confidence, 0.0, 1.0)) / 2.0 * 100.0;
    return {percentile_sorted(medians, tail), percentile_sorted(medians, 100.0 - tail)};
}

TimingStats summarize(const std::vector<double>& samples_us, const std::vector<double>& events_us) {
    TimingStats t;
    t.samples_us = samples_us;
    t.n = static_cast<int>(samples_us.size());
    if (samples_us.empty())
        return t;
    std::vector<double> sorted = samples_us;
    std::sort(sorted.begin(), sorted.end());
    t.median_us = percentile_sorted(sorted, 50);
    t.mean_us = mean(samples_us);
    t.p10_us = percentile_sorted(sorted, 10);
    t.p90_us = percentile_sorted(sorted, 90);
    const Interval ci = bootstrap_median_ci(samples_us);
    t.ci_low_us = ci.low;
    t.ci_high_us = ci.high;
    const double rse = rel_std_error(samples_us);
    t.rel_std_error = std::isfinite(rse) ? rse : 0;
    t.events_median_us = median(events_us);
    return t;
}

}  // namespace kerncast::stats
