#pragma once
// Summaries of repeated kernel timings. Pure functions so that the numbers a user reads (median, CI, relative
// standard error) are unit-tested without a GPU.

#include "core/measurement.h"

#include <cstdint>
#include <vector>

namespace kerncast::stats {

// All of these take the samples by value or const reference and never reorder the caller's vector.
// An empty sample set gives 0 everywhere (a measurement that produced no samples has nothing to summarise).
double median(std::vector<double> samples);
double mean(const std::vector<double>& samples);
// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two samples.
double stddev(const std::vector<double>& samples);
// Percentile p in [0, 100] with linear interpolation between closest ranks (numpy's default).
double percentile(std::vector<double> samples, double p);
// Standard error of the mean over the mean: the stopping rule of the timing loop. Infinite for fewer than two
// samples, so that a loop never stops on a single run.
double rel_std_error(const std::vector<double>& samples);

struct Interval {
    double low = 0;
    double high = 0;
};

// Percentile bootstrap confidence interval of the median. The resampling RNG has a fixed seed so that the same
// samples always give the same interval (recorded measurements must be reproducible).
Interval bootstrap_median_ci(const std::vector<double>& samples, double confidence = 0.95, int resamples = 2000,
                             uint64_t seed = 0x6b65726e63617374ULL);

// Every field of TimingStats from the primary samples (CUPTI durations) and the events cross-check.
TimingStats summarize(const std::vector<double>& samples_us, const std::vector<double>& events_us = {});

}  // namespace kerncast::stats
