#pragma once
// The local surrogate "local-xgb" (ARCHITECTURE §6): a learned model that needs no LLM, the embedded default.
//
// What it forecasts. A query is a candidate against its anchor (engine/surrogate/surrogate.h ForecastAnchor: the
// measured parent, else the reference); the target is log S = log(t_anchor / t_candidate). It learns from measured
// programs (learn(): a program and its speedup over the reference) and makes PAIRS of them: two programs of one pack
// measured on one device give log S = log speedup_candidate - log speedup_anchor. All n^2 pairs of a recording
// are too many to learn from at interactive speed, so pairs are sampled (local_training_pairs()): every program
// against its pack's reference, against its measured parent when it had one, against up to `neighbours` programs
// of the same text whose tunables differ in exactly one name (what a parametric move makes), against `two_moves`
// neighbours' neighbours (two moves or a crossover), and against `random` others; a small pack (the run's first
// measurements) gives all its pairs.
//
// Features of a pair (columns()): the pack's roofline numbers and reference time, the candidate's own program
// features (local_features(): static report, launch plan, source text), the differences of every program feature
// as log-ratios (slog(c) - slog(a), slog(x) = sign(x) log2(1 + |x|)), whether both share a program text, how many
// tunables differ, which side
// is the reference, and per tunable name seen in training c:<NAME> (the candidate's value, as slog) and d:<NAME>
// (the log-ratio against the anchor's). Relative features are what transfers to a problem never seen: "twice the
// blocks", "the same text with half the items per thread".
//
// Model. Two heads, each an ensemble of K boosters trained as a cross-validation ensemble. The pair head learns the
// sampled pairs in both orientations (so that swapping candidate and anchor about negates the forecast). The move
// head learns what a search asks, directed: moves from each pack's best programs (local_move_pairs(): the top
// move_elite_share of a pack, to programs of the same text 1, 2, 3+ steps away), with shallower trees. A move (same
// text, tunables changed) is forecast by the mean of both heads' calibrated forecasts with the move head's spread
// (the move head's share falls from one half as the pack becomes known); any other pair by the pair head. A program
// against itself is forecast at exactly 1x by the identity rule below. Folds: half of the packs (seeded) are held out
// whole by one fold, the other packs' pairs are dealt at random, so the out-of-fold residuals measure both a pack never
// seen and a known one. A small pack's pairs are weighted up (up to 8x) so that the run's own measurements count beside
// the recordings' thousands.
//
// Distribution. log S ~ Logistic(mu, sigma) over the bins of the scheme, mixed with a uniform floor of kFloor.
// Everything below is CALIBRATED on out-of-fold rows, separately for a pack never seen and a known one, and only on
// rows anchored as a search anchors: on one of the best kEliteShare of its pack's programs (a search expands its
// best measured programs; a sweep's poor configurations differ from each other far more than an elite's
// neighbours do), each head on its own rows. Forecasts are judged per problem against that problem's own
// climatology, so every pack weighs the same in these fits, relative to its climatology's score.
//  - mu: a slope and an intercept of the truth on the members' mean, for moves and for other pairs apart (a move
//    from a pack's best program is slower on average than a model trained on both orientations says).
//  - sigma = sqrt((tau * s)^2 + (b * mu)^2). s is, for a pack never seen, a learned error scale (a small booster on
//    log |out-of-fold error| of the packs held out whole: how much a move matters differs by an order of magnitude
//    between an element-wise kernel and a reduction, and the row's features say which it is; shrunk towards the
//    class RMS by their geometric mean, since a new problem can be unlike every kind learned), else the out-of-fold
//    RMS of the pair class (different texts; one text with 1, 2, 3+ tunables changed); known and unknown packs mix
//    with the weight m / (m + kSeenPrograms), m the programs learned of the query's pack. tau and b minimise the
//    Brier score plus the ranked probability score of the out-of-fold true bins, the scores forecasts are judged by.
//  - The bins are then mixed with the training packs' climatology (the bin frequencies of their out-of-fold truths,
//    every pack weighing the same) by a share fitted on the same rows, each row mixed with the climatology of the
//    packs other than its own. A problem whose landscape hangs on what no learned problem shows (a transpose's bank
//    conflicts) gets sharp forecasts that are confidently wrong; the share keeps mass where other problems' moves
//    land, and is zero where the boosters transfer. log_mean and log_sigma stay the logistic's (what gating uses).
//
// Identity. A candidate that is the anchor's program (same text and tunables) is forecast at S = 1 with the timing
// noise as its spread: the RMS log speedup of the references timed against themselves in what was learned (else
// kIdenticalSigma). With nothing learned, any other pair gets a wide prior around 1x (kPriorSigma).
//
// Training is deterministic for a given seed. learn() only stores programs; the next forecast retrains from
// scratch once options.retrain_after new ones arrived (kerncast-bench-leave-one-out prints the retrain time with
// every recording).
//
// Incremental training (what a search does, freezeBase()). Retraining on every recording after each batch costs
// seconds while the measurement pool waits, and the recordings do not change during a search. So a search trains
// once on what it learned before its first measurement (the other problems' recordings: the base) and reads that
// model from a cache when the same programs were trained on with the same options and the same model code before
// (forecaster_cache_dir(): a second search of a problem starts at once). Its own measurements then come in through
// a correction: per member, a small booster fitted on the residuals of that member on the pairs of the programs
// learned after the base (sampled as above, among themselves), retrained from scratch on every retrain (tens of
// milliseconds). A member's prediction is the base member's plus its correction times the correction's share; the
// calibration is the base's, with the programs learned since counted in how known a pack is. The share is how much
// of the correction holds up on programs it did not learn (correctionShareOf(): the run's programs in three folds,
// each fold's children forecast by a correction trained without them): on some problems a correction fitted to a
// few dozen measurements spreads the forecasts far wider than the truth and does worse than the base alone, on
// others it is what makes the forecasts right. Deterministic for a seed like the full retrain; the base is the same
// whether trained or read from the cache.

#include "core/bins.h"
#include "engine/surrogate/surrogate.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
//   plan.occupancy          threads an SM holds at once of the largest launch (threads, blocks, registers and shared
//                           memory each limit it) / the SM's 2048
//   plan.filled             threads of the largest launch resident at once / the GPU's thread slots (a small grid
//                           leaves SMs idle; NaN when the SM count is unknown)
//   problem.log2_bytes      roofline bytes of the benchmark case
//   problem.log2_flops      roofline flops
//   problem.intensity       flops / bytes
//   ref.log_time_us         natural log of the reference's measured time
//   parent.log_speedup      natural log of the parent's measured speedup
//   src.length              candidate source length (characters)
//   src.shfl                occurrences of __shfl
//   src.shared              __shared__
//   src.vector_types        float2/float4/half2/int4/uint4/... vector types
//   src.mma                 wmma:: / mma_sync / mma.sync / wgmma.mma_async (tensor cores)
//   src.atomic              atomicAdd / atomicMax / ... (any atomic*)
//   src.unroll              #pragma unroll
//   src.syncthreads         __syncthreads
//   src.is_reference        1 when the candidate is the reference program's text, 0 otherwise, NaN when unknown
const std::vector<std::string>& local_feature_names();
// Values in the order of local_feature_names(); NaN where the query does not say.
std::vector<double> local_features(const ForecastQuery& query);

// How training pairs are sampled from the learned programs of each pack.
struct LocalPairOptions {
    size_t all_pairs_up_to = 24;  // a pack of at most this many programs gives all its pairs
    size_t neighbours = 3;        // same text, one tunable different
    size_t two_moves = 2;         // same text, a neighbour's neighbour (two tunables different, mostly)
    size_t random = 2;            // any other program of the pack
    // Most pairs in all: beyond it the pairs of large packs are thinned at random (small packs keep theirs), so that
    // a retrain with every recording stays under 2 s (kerncast-bench-leave-one-out prints the time).
    size_t max_pairs = 8000;
    // Directed moves from each pack's best programs (the move head): the share of a pack's programs that anchor them,
    // and how many programs of the same text with 1, 2 and 3 or more tunables changed each anchor gets (all 0: no
    // move head; every pair is forecast by the pair head).
    double move_elite_share = 0.12;
    size_t move_one = 8;
    size_t move_two = 4;
    size_t move_more = 2;
};

// A training pair: indices into the learned programs (the examples given to local_training_pairs()).
struct ProgramPair {
    size_t candidate = 0;
    size_t anchor = 0;
};
// The pairs the local forecaster learns from, for a set of examples (see the header comment): only within a pack,
// never a program against itself, each unordered pair once, in a seeded orientation. Deterministic for a seed.
std::vector<ProgramPair> local_training_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                              const LocalPairOptions& options = {});

// The move head's pairs (see LocalPairOptions::move_elite_share): moves from each pack's best programs to programs of
// the same text, directed from the better-ranked program, 1, 2 and 3+ steps away in the tunables' values as the pack
// has them. Deterministic for a seed.
std::vector<ProgramPair> local_move_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                          const LocalPairOptions& options = {});

struct LocalForecasterOptions {
    uint64_t seed = 1;
    int members = 4;   // boosters = cross-validation folds (>= 2)
    int rounds = 150;  // boosting rounds per member
    int max_depth = 6;
    int move_max_depth = 4;  // of the move head's boosters (shallower trees transfer better to a new problem)
    double eta = 0.08;
    double subsample = 0.8;
    double colsample = 0.8;
    double min_child_weight = 2.0;
    double lambda = 1.0;
    int threads = 1;           // members trained at once (each booster uses one thread)
    size_t retrain_after = 1;  // new examples that make the next forecast retrain first
    // A pair whose two configurations other problems of its family measured (sibling packs) is forecast from their
    // log S as well as from the boosters.
    bool siblings = true;
    LocalPairOptions pairs;
    BinScheme scheme = BinScheme::gfV2();
};

// The options a search uses (retrains often: fewer, smaller boosters, a retrain every few measurements); the
// leave-one-out benchmark scores the same.
LocalForecasterOptions search_forecaster_options(uint64_t seed);

class LocalForecaster : public Surrogate {
public:
    static constexpr double kFloor = 0.005;           // uniform share mixed into every forecast
    static constexpr double kShrink = 4.0;            // pseudo-residuals pulling a class's RMS to the pooled one
    static constexpr double kPriorSigma = 1.0;        // log-S spread of the prior (nothing learned)
    static constexpr double kIdenticalSigma = 0.02;   // log-S spread of a program against itself (timing noise)
    static constexpr double kSeenPrograms = 8.0;      // programs of a pack that make it half known
    static constexpr double kSmallPackRows = 200.0;   // pairs below which a pack's pairs are weighted up
    static constexpr size_t kCalibrationRows = 1500;  // out-of-fold rows the spread is calibrated on, at most
    static constexpr size_t kStackRows = 50;          // out-of-fold rows with sibling packs needed to fit them apart
    static constexpr size_t kStackCalibrationRows = 600;  // of those, the most their spread is calibrated on
    static constexpr double kEliteShare = 0.25;  // the best share of a pack's programs that anchor calibration pairs
    static constexpr double kScaleFloor = 0.01;  // added to |error| before its log is learned
    static constexpr int kScaleRounds = 40;      // boosting rounds of the error-scale model

    explicit LocalForecaster(LocalForecasterOptions options = {});
    ~LocalForecaster() override;
    LocalForecaster(const LocalForecaster&) = delete;
    LocalForecaster& operator=(const LocalForecaster&) = delete;

    std::string id() const override { return "local-xgb"; }
    // Retrains first when enough new examples arrived (options.retrain_after). Never throws for one query.
    std::vector<ForecastResult> forecast(const std::vector<ForecastQuery>& queries) override;
    // Keeps the programs; training happens on the next forecast (or retrain()). Throws kerncast::Error for an
    // example whose speedup is not a positive finite number.
    void learn(const std::vector<LabelledExample>& examples) override;
    bool learns() const override { return true; }
    // {"examples": learned so far, "trained_on": the examples the model was trained on}. restoreState, given the
    // same examples again, trains on that many of them (the model the search had) and leaves the rest pending.
    nlohmann::json checkpointState() const override;
    void restoreState(const nlohmann::json& state) override;

    // The model's belief about one query (log S against its anchor), before it becomes bins.
    struct Prediction {
        double log_speedup = 0;  // mu: natural log of the predicted S
        double sigma = kPriorSigma;
        double spread = 0;       // standard deviation of the members' predictions
        int pack_examples = 0;   // programs learned of the query's pack
        bool prior = true;       // nothing learned yet
        bool identical = false;  // the candidate is its anchor's program
        // Sibling packs the forecast was stacked with (0: none), their mean log S and its spread.
        int sibling_packs = 0;
        double sibling_log_speedup = 0;
        double sibling_spread = 0;
        // The training packs' climatology and its share in the forecast's bins (none for the prior and the identity).
        std::array<double, kBinCount> climatology{};
        double climatology_share = 0;
    };
    Prediction predict(const ForecastQuery& query);
    double predictedLogSpeedup(const ForecastQuery& query) { return predict(query).log_speedup; }

    // Trains now on every program learned so far (with a frozen base: the correction on the programs since).
    void retrain();
    // The programs learned so far become the base (see the header comment): trained now, or read from
    // `cache_dir` (none: no cache) where a model of the same programs, options and model code was saved; a trained
    // base is saved there. Later retrains fit only the correction on the programs learned after. Nothing learned
    // yet: nothing to freeze, retrains stay full. A cache file that cannot be read is replaced (baseSource() says
    // why); a cache that cannot be written leaves the base trained and says so too. Throws kerncast::Error when
    // training fails.
    void freezeBase(const std::string& cache_dir = {});
    // Where the frozen base came from: "trained", "cache <file>", "trained (cache <file> ...: why)" or "" when none.
    std::string baseSource() const;
    // Whether freezeBase(cache_dir) would read the base from the cache rather than train it.
    bool baseCached(const std::string& cache_dir) const;
    size_t baseExampleCount() const;  // programs in the frozen base (0: none frozen)
    // The share of the correction forecasts take (correctionShareOf()); 1 without a correction.
    double correctionShare() const;
    size_t exampleCount() const;
    // Programs learned per pack (what the model may know about each problem).
    std::map<std::string, int> packPrograms() const;
    size_t pairCount() const;  // pairs of the last retrain
    double lastRetrainSeconds() const;
    // Calibration found at the last retrain: the temperature and the out-of-fold RMS of log S for pairs of
    // different program texts in packs never seen.
    double temperature() const;
    double pooledResidualRms() const;
    // Column names of the trained model; empty before training.
    std::vector<std::string> columns() const;

    struct Program;  // a learned program (defined in the .cpp)

private:
    struct Siblings;
    struct Model;
    struct TrainingStage;
    friend std::vector<ProgramPair> local_training_pairs(const std::vector<LabelledExample>&, uint64_t,
                                                         const LocalPairOptions&);
    static std::vector<ProgramPair> pairsOf(const std::vector<Program>& programs, uint64_t seed,
                                            const LocalPairOptions& options);
    Prediction predictLocked(const ForecastQuery& query) const;
    void retrainLocked();
    // Fits a head's spread and calibration to the out-of-fold forecasts of its stage (see the header comment).
    void calibrate(Model& model, TrainingStage& stage, size_t cols) const;
    // With a frozen base: fits the correction on the programs learned after it.
    void retrainCorrectionLocked();
    // The correction's share of log S for the pair (added to each member's prediction in `each`); 0 without one.
    double correctionOf(const Program& c, const Program& a, std::vector<double>* each) const;
    // How much of the correction holds up on programs it did not learn: the least-squares share, within [0.5, 1], of
    // its out-of-fold predictions in the base's residuals (`residual`, per pair; the run's programs in folds, a fold's
    // pairs forecast by a correction trained without the fold's programs); 1 with too few pairs to tell.
    double correctionShareOf(const std::vector<ProgramPair>& pairs, const std::vector<double>& residual,
                             const std::vector<float>& rows, const std::vector<float>& weights,
                             const Model& correction) const;
    std::string cacheKey() const;
    // The base's cache file in cache_dir for a key ("" without a folder).
    static std::string cacheFile(const std::string& cache_dir, const std::string& key);
    static nlohmann::json saveModel(const Model& model, const std::string& key);
    static std::unique_ptr<Model> loadModel(const nlohmann::json& saved, const std::string& key);

    LocalForecasterOptions m_options;
    mutable std::mutex m_mutex;
    std::vector<Program> m_programs;
    size_t m_pending = 0;
    double m_lastRetrainSeconds = 0;
    std::unique_ptr<Model> m_model;
    // Incremental training (freezeBase()): the base's programs and what its model said before any correction.
    size_t m_baseCount = 0;
    std::map<std::string, int> m_basePackPrograms;
    size_t m_basePairs = 0;
    std::string m_baseSource;
    std::unique_ptr<Model> m_correction;  // members: one correction booster per base member; empty: none
    double m_correctionShare = 1.0;       // the share of the correction a forecast takes (correctionShareOf())
};

// Where searches keep their trained base models: $XDG_CACHE_HOME/kerncast/forecaster (or ~/.cache/...); "" when
// neither is set.
std::string forecaster_cache_dir();

// The bin probabilities of log(speedup) ~ Logistic with mean mu and standard deviation sigma over the scheme, mixed
// with a uniform floor. The logistic's exponential tails (rather than a Gaussian's) keep the tail masses apart in
// double precision far from the edges: a candidate predicted at 14x and one at 10x then differ in their bin-7 mass,
// so their expected bins rank them even when both sit deep in the open last bin.
std::array<double, kBinCount> speedup_bins(double mu, double sigma, const BinScheme& scheme, double floor);

}  // namespace kerncast
