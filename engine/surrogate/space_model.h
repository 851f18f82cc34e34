#pragma once
// The space model: what a search learns of one problem's configuration space from its own measurements, to choose
// the next configuration to measure among every one the space holds (SearchConfig::space_picks).
//
// The local forecaster answers "how fast is this child against that measured program", from features that need the
// child's program (its static report needs an NVRTC compile); screening thousands of configurations that way costs a
// compile each. A family's configurations differ only in their tunables, so a model of the tunables alone, fitted to
// the run's own measured configurations, can score the whole space for the price of a prediction: a bagged
// ensemble of small boosters on the tunables' values, target the natural log of the speedup over the reference
// (a configuration that failed counts as far below the slowest measured one, so that the model learns to avoid its
// region). The ensemble's mean and spread give each configuration an expected improvement over the best measured
// (Normal in log speedup), the acquisition a Bayesian optimiser uses: a configuration is worth a measurement when it
// is likely better or when the model knows little of its region.
//
// Deterministic for a seed.

#include "core/bins.h"
#include "engine/surrogate/boosters.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kerncast {

using Configuration = std::map<std::string, int64_t>;

struct SpaceModelOptions {
    uint64_t seed = 1;
    int members = 8;    // bagged boosters (each on a bootstrap sample of the measured configurations)
    int rounds = 60;    // boosting rounds per member
    int max_depth = 4;  // trees: interactions of up to this many tunables
    double eta = 0.2;
    // Spread added to the members' (in log speedup): timing noise and what a few boosters cannot see.
    double sigma_floor = 0.02;
    // A failed configuration's target: this far (log) below the slowest measured one.
    double failure_penalty = 1.0;
};

class SpaceModel {
public:
    // tunables: the names of the family's tunables, the model's columns in this order.
    SpaceModel(std::vector<std::string> tunables, SpaceModelOptions options = {});

    // Refits from scratch on every measured configuration: log_speedup[i] of configs[i], NaN for a failure.
    void fit(const std::vector<Configuration>& configs, const std::vector<double>& log_speedups);
    bool fitted() const { return !m_members.empty(); }

    struct Prediction {
        double mean = 0;   // log speedup over the reference
        double sigma = 0;  // the members' spread and the floor
    };
    std::vector<Prediction> predict(const std::vector<Configuration>& configs) const;

private:
    std::vector<float> rows(const std::vector<Configuration>& configs) const;

    std::vector<std::string> m_tunables;
    SpaceModelOptions m_options;
    std::vector<Booster> m_members;
};

// E[max(X - best, 0)] for X ~ Normal(mean, sigma): the expected improvement over `best` (all in log speedup).
double expected_improvement(double mean, double sigma, double best);

// The bins of a scheme under log S ~ Normal(mean, sigma), with a uniform floor of kSpaceFloor so that no bin is ruled
// out: how the space model's prediction becomes a forecast against an anchor.
inline constexpr double kSpaceFloor = 0.004;
std::array<double, kBinCount> space_bin_probabilities(const BinScheme& scheme, double mean, double sigma);

}  // namespace kerncast
