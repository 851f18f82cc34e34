#pragma once
// The local surrogate "local-xgb" (ARCHITECTURE §6): a learned model that needs no LLM, the embedded default.
//
// Features (one row per query; a value that is unknown is NaN, which XGBoost routes along a learned default branch):
//   the fixed list below (local_feature_names(), values from local_features()), then two model-level columns
//   pack.offset       per-pack normalisation: the shrunk mean log-speedup of the pack's training examples (NaN for a
//                     pack never seen), which also lets a tree tell packs apart by their level,
//   pack.same_source  training examples of the pack with exactly this program text (a family's configurations share
//                     one text; a seed or a rewrite is usually alone), and
//   t:<NAME>          one column per tunable name seen in training (e.g. t:BLOCK), NaN where a program has no such
//                     tunable.
//
// Model. The target is log(speedup) minus the pack's offset, so a family is learned from a share of its own
// configurations, and what transfers between problems is how launch shape, resources and source text move a
// program relative to its pack. An ensemble of K boosters is trained as a cross-validation ensemble: the examples
// are dealt into K folds (stratified by pack, seeded) and member k learns every fold but k, with its offsets and
// counts computed from those folds only. Every example thus has an out-of-fold prediction from the one member that
// never saw it; a forecast's mu is the mean of the K members (their spread is reported).
//
// Distribution. log(speedup) ~ Normal(mu, sigma) integrated over the bins of the scheme, mixed with a uniform floor
// of kFloor so that no bin is impossible. sigma = tau * s, where s is the RMS of out-of-fold residuals of the
// query's class, (pack, novel program text or not), shrunk towards the pooled RMS of that class (kShrink
// pseudo-examples): one more configuration of a known family is placed far better than a program text the pack has
// never shown. A pack never seen gets the pooled RMS widened by the spread of pack offsets. The temperature tau is
// CALIBRATED: chosen to minimise the negative log-likelihood of the true bins of the out-of-fold predictions.
// The members' spread is deliberately not added to sigma: within one class sigma is then constant, so the
// expected bin (what ranking and top-k gating use) is monotone in mu even where bin 8 saturates; with the spread
// added, near-certain "extreme speedup" forecasts were ordered by spread rather than by predicted speedup.
//
// With no examples a forecast is an honest wide prior: mu = log(parent speedup) when known, else 0 (as fast as the
// reference), sigma = kPriorSigma. Training is deterministic for a given seed (each booster single-threaded and
// seeded; members may train in parallel without changing the result). learn() only stores examples; the next
// forecast retrains from scratch once options.retrain_after new examples arrived (boosted trees do not update
// in place; a retrain on 2000 examples takes 1-2 s on one core, see kerncast-bench-surrogate-quality).

#include "core/bins.h"
#include "engine/surrogate.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kerncast {

// The fixed features, in column order:
//   static.kernels          kernels in the candidate's static report
//   static.max_registers    largest register count of its kernels
//   static.shared_bytes     static shared memory, summed over kernels
//   static.spill_bytes      spill stores + loads, summed
//   static.barriers         named barriers, summed
//   static.stack_bytes      largest stack frame
//   plan.launches           launches in the plan at the benchmark case
//   plan.total_blocks       blocks, summed over launches
//   plan.threads_per_block  largest block (threads)
//   plan.dynamic_smem       largest dynamic shared memory
//   plan.waves              largest blocks / SMs of a launch (NaN when the SM count is unknown)
//   plan.log2_threads       log2 of the threads launched, summed over launches
//   plan.bytes_per_thread   problem bytes / threads launched
//   plan.flops_per_thread   problem flops / threads launched
//   problem.log2_bytes      roofline bytes of the benchmark case
//   problem.log2_flops      roofline flops
//   problem.intensity       flops / bytes
//   ref.log_time_us         natural log of the reference's measured time
//   parent.log_speedup      natural log of the parent's measured speedup
//   src.length              candidate source length (characters)
//   src.shfl                occurrences of __shfl
//   src.shared              __shared__
//   src.vector_types        float2/float4/half2/int4/uint4/... vector types
//   src.mma                 wmma:: / mma_sync / mma. (tensor cores)
//   src.atomic              atomicAdd / atomicMax / ... (any atomic*)
//   src.unroll              #pragma unroll
//   src.syncthreads         __syncthreads
//   src.is_reference        1 when the candidate is the reference program's text, 0 otherwise, NaN when unknown
const std::vector<std::string>& local_feature_names();
// Values in the order of local_feature_names(); NaN where the query does not say.
std::vector<double> local_features(const ForecastQuery& query);

struct LocalForecasterOptions {
    uint64_t seed = 1;
    int members = 5;  // boosters = cross-validation folds (>= 2)
    int rounds = 300;  // boosting rounds per member
    int max_depth = 5;
    double eta = 0.05;
    double subsample = 0.8;
    double colsample = 0.8;
    double min_child_weight = 1.0;
    double lambda = 1.0;
    int threads = 1;  // members trained at once (each booster uses one thread)
    size_t retrain_after = 1;  // new examples that make the next forecast retrain first
    BinScheme scheme = BinScheme::gfV2();
};

class LocalForecaster : public Surrogate {
public:
    static constexpr double kFloor = 0.005;  // uniform share mixed into every forecast
    static constexpr double kShrink = 4.0;  // pseudo-examples pulling a pack's residual RMS to the pooled one
    static constexpr double kOffsetShrink = 1.0;  // pseudo-examples at log-speedup 0 in a pack's offset
    static constexpr double kPriorSigma = 1.0;  // log-speedup spread of the zero-example prior

    explicit LocalForecaster(LocalForecasterOptions options = {});
    ~LocalForecaster() override;
    LocalForecaster(const LocalForecaster&) = delete;
    LocalForecaster& operator=(const LocalForecaster&) = delete;

    std::string id() const override { return "local-xgb"; }
    // Retrains first when enough new examples arrived (options.retrain_after). Never throws for one query.
    std::vector<ForecastResult> forecast(const std::vector<ForecastQuery>& queries) override;
    // Keeps the examples; training happens on the next forecast (or retrain()). Throws kerncast::Error for an
    // example whose speedup is not a positive finite number.
    void learn(const std::vector<LabelledExample>& examples) override;
    bool learns() const override { return true; }

    // The model's belief about one query, before it becomes bins.
    struct Prediction {
        double log_speedup = 0;  // mu: natural log of the predicted speedup
        double sigma = kPriorSigma;
        double spread = 0;  // standard deviation of the members' predictions
        int pack_examples = 0;  // training examples of the query's pack
        bool prior = true;  // no model yet: the zero-example prior
    };
    Prediction predict(const ForecastQuery& query);
    double predictedLogSpeedup(const ForecastQuery& query) { return predict(query).log_speedup; }

    // Trains now on every example learned so far (a no-op without examples).
    void retrain();
    size_t exampleCount() const;
    double lastRetrainSeconds() const;
    // Calibration found at the last retrain: the temperature and the pooled out-of-fold RMS of log-speedup.
    double temperature() const;
    double pooledResidualRms() const;
    // Column names of the trained model (fixed features, pack.offset, t:<NAME>...); empty before training.
    std::vector<std::string> columns() const;

private:
    struct Model;
    Prediction predictLocked(const ForecastQuery& query) const;
    void retrainLocked();

    LocalForecasterOptions m_options;
    mutable std::mutex m_mutex;
    std::vector<LabelledExample> m_examples;
    size_t m_pending = 0;
    double m_lastRetrainSeconds = 0;
    std::unique_ptr<Model> m_model;
};

// The bin probabilities of log(speedup) ~ Logistic with mean mu and standard deviation sigma over the scheme, mixed
// with a uniform floor. The logistic's exponential tails (rather than a Gaussian's) keep the tail masses apart in
// double precision far from the edges: a candidate predicted at 14x and one at 10x then differ in their bin-7 mass,
// so their expected bins rank them even when both sit deep in the open last bin.
std::array<double, kBinCount> speedup_bins(double mu, double sigma, const BinScheme& scheme, double floor);

}  // namespace kerncast
