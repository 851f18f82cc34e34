#pragma once
// KernelBench's fast_p: the share of problems whose kernel is correct and more than p times as fast as a baseline
// (fast_0 is the share that is correct at all). Kerncast reports it against the problem's reference kernel and
// against PyTorch eager (the recorded time of the problem's `pytorch` expression), where that time is known.

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace kerncast {

// The thresholds Kerncast reports: 0 (correct), 1, 1.5, 2.
const std::vector<double>& fast_p_thresholds();

// speedups: one per problem, the best correct kernel's speedup over the baseline; nullopt when no correct kernel
// was found. An empty list gives 0.
double fast_p(const std::vector<std::optional<double>>& speedups, double p);

// {"p": [0, 1, 1.5, 2], "n": problems, "fast_p": [shares]}; "n": 0 and no shares when the baseline is unknown for
// every problem (e.g. no PyTorch eager time was recorded).
nlohmann::json fast_p_json(const std::vector<std::optional<double>>& speedups);

}  // namespace kerncast
