#pragma once
// The search runner (ARCHITECTURE §3, §6, §7): one thread owns a search and its state. It proposes children of elite
// parents with the mutators, forecasts them with the surrogate, gates them, measures what gating sends to the
// device, and writes every step to the run store before it reports it through the event callback. Other threads
// talk to it only through post() (steering commands) and the events they receive (copies).

#include "core/gating.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/search_strategy.h"
#include "engine/device.h"
#include "engine/replay/replay_device.h"
#include "engine/search/mutators.h"
#include "engine/search/search_events.h"
#include "engine/surrogate/surrogate.h"
#include "engine/timeline.h"
#include "engine/worker/measurement_pool.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kerncast {

struct SearchBudgets {
    int64_t measurements = 40;  // device measurements (the reference and the seeds count too)
    int64_t forecasts = 0;      // 0: 100 per measurement of the budget
    int64_t tokens = 0;         // LLM tokens (forecasts and rewrites); 0: no limit
    double cost_usd = 0;        // 0: no limit
    double wall_s = 0;          // 0: no limit
};
void to_json(nlohmann::json& j, const SearchBudgets& b);
SearchBudgets search_budgets_from_json(const nlohmann::json& j);
// The budgets of a resumed run: each grows to the given one when that is larger (0, "no limit", is never replaced,
// and a given 0 extends nothing).
SearchBudgets extended_budgets(const SearchBudgets& stored, const SearchBudgets& given);

// The default cap on one selective batch's measurements (SearchConfig::measure_per_parent). 4 rather than a
// measure-all batch's 8: the budget goes to more parents, which found the best of rmsnorm's flat top more often at
// the same ratio elsewhere (kerncast-bench-gated-vs-baseline, 20 seeds, H200 and H100 recordings; README).
inline constexpr int kMeasurePerParent = 4;
// The default of SearchConfig::space_picks for a gated search, and the family configurations a run must have measured
// before the space model chooses any.
inline constexpr int kSpacePicks = 2;
inline constexpr size_t kSpaceModelAfter = 8;
// In a space the space model covers, the initial screen measures this many more of its configurations beside the most
// promising, chosen to lie far from each other (Loop::screenInitial), so that the model's first fit sees the space.
inline constexpr size_t kInitialSpread = 6;
// The smallest family space the space model is used on by default. Our own families hold 55-290 configurations, which
// a parent's moves and the gate cover within a few dozen measurements; there the space model's choices took
// measurements from them (gated benchmark, H200 recording, budget 30: rmsnorm's median best fell below the
// measure-all baseline's). The benchmark hub's spaces hold 4,000-11,000, where the moves stall and it leads.
inline constexpr size_t kSpaceModelFrom = 1000;

// Everything that defines a run; stored in the run's config so that --resume continues the same search.
struct SearchConfig {
    std::string problem_dir;
    std::string device = "replay";                    // device id as given (open_device)
    std::string surrogate = "local";                  // local | llm | none
    std::vector<std::string> mutators{"parametric"};  // parametric, llm-rewrite, llm-diff
    GatingConfig gating;
    StrategyConfig strategy;
    SearchBudgets budgets;
    uint64_t seed = 1;
    int batch = 0;               // children proposed per parent and iteration; 0: 8 for measure-all, 24 when gated
                                 // (forecasts are cheap, so a gated search looks at more children per measurement)
    int measure_per_parent = 0;  // most measurements a selective batch spends (audits and children without a forecast
                                 // aside): the rest of its measure-worthy children wait, trusted, for a rescue;
                                 // 0: kMeasurePerParent, stored with a new run as that number. An unsure
                                 // surrogate would otherwise spend the budget on the children of one parent.
    // Family configurations chosen over the problem's whole space (engine/surrogate/space_model.h): each iteration of
    // a selective or top-k search measures, beside the parent's children, the `space_picks` configurations nobody has
    // proposed yet whose expected improvement over the best is highest, once kSpaceModelAfter family configurations
    // are measured; with 2 or more, also the unmeasured neighbour of the best configuration the model predicts
    // fastest (a refining pick, even when a child the gate trusted holds it). -1: kSpacePicks when gated and the
    // family holds at least kSpaceModelFrom configurations, else 0, stored with a new run as that number (a run
    // stored without it resumes with 0); 0: none.
    int space_picks = -1;
    // Which candidates are compiled for their static report when they are proposed (what the local surrogate's
    // static features and an LLM's prompt read): "all"; or "measured", where a configuration of the problem's family
    // is compiled only when it is measured (the device compiles it then) and is forecast from its tunables, launch
    // plan and source without a static report, the report measured kept for display only, so that forecasts of the
    // measured and of the unmeasured configurations read the same features. Forecasting thousands of configurations
    // then costs no compile each (a large kernel takes 0.4-7.5 s in NVRTC). "auto": "measured" when the family holds
    // at least kSpaceModelFrom configurations, else "all"; stored with a new run as the one chosen (a run stored
    // without it resumes with "all").
    std::string static_reports = "auto";
    // Every forecast's bins recalibrated against the outcomes the run has measured (core/recalibration.h), once
    // 2 * BinRecalibration::kMinOutcomes forecasts came true and where that held up on the newest of them
    // (choose_recalibration); what the surrogate said is kept with it. A run stored without it resumes with false.
    bool recalibrate = true;
    static constexpr double kRecalibrationHalfLife = 32;  // measured outcomes after which an outcome weighs half
    int initial_family = 2;   // random family configurations measured with the reference and the seeds
    int initial_screen = 16;  // gated searches forecast initial_family * initial_screen random configurations
                              // and measure the initial_family most promising
    int inspirations = 4;     // elites shown to the mutators
    nlohmann::json llm = nlohmann::json::object();  // endpoint, model, ... (never the API key)
    PoolConfig pool;  // several workers, devices or hosts measure a batch in parallel (measurement_pool.h)
    // Choose the next batch while the last ones are measured: each iteration forecasts, gates and queues its batch
    // behind those in flight, and the oldest is applied once `ahead` measurements are queued behind it, so the
    // surrogate's retraining and the forecasts overlap the measurements and a pool's workers stay busy across batches
    // (the initial screen's choice too: it is in flight while the first iteration chooses its batch). The search then
    // learns from a batch later than without it; it stays deterministic for its seed with one worker or many.
    bool overlap = false;
    // Measure in rounds of `round`: a batch sent to the device is topped up to a multiple of it (never past the
    // measurement budget) with the candidates its gate passed over, the most promising first, then with those that
    // earlier batches passed over, so that a pool of `round` workers has a full round to measure. The first batch
    // (the reference and the seeds) is filled with random family configurations. A search setting, not the pool's
    // size: the same search with 1 or N workers. 1: every batch as the gate chose it.
    int round = 1;
    // An overlapped search applies a batch once the batches queued behind it hold `ahead` measurements, so that the
    // workers have that much to measure while the next batch is chosen (engine/search/search_loop_measuring.cpp).
    // 0: twice the round. More keeps more workers busy; the search then learns from a batch later.
    int ahead = 0;
    int aheadOrDefault() const { return ahead > 0 ? ahead : 2 * std::max(round, 1); }
    // LLM mutators: how proposals are earned by measurements and spread over parents (mutators.h). A search that
    // uses an LLM and gives no token budget gets kLlmTokensPerMeasurement per measurement of its budget (and, with
    // prices known, kLlmUsdPerMeasurement), stored with the run as numbers.
    LlmPacing llm_pacing;
    int samples = 1;       // LLM forecaster: requests per candidate, averaged
    bool abstain = false;  // LLM forecaster: predict or defer (a deferral is measured)
};
void to_json(nlohmann::json& j, const SearchConfig& c);
SearchConfig search_config_from_json(const nlohmann::json& j);
// The default LLM budgets of a search, per measurement of its budget (docs/llm.md "What a search costs"): the paced
// LLM mutators spend about 4,000 tokens per measurement on the softmax search of bench/llm_cost.py, so the token
// budget ends only a search whose replies or prompts run far longer than that.
inline constexpr int64_t kLlmTokensPerMeasurement = 40000;
inline constexpr double kLlmUsdPerMeasurement = 0.10;
// Whether a config asks a language model for anything (the LLM surrogate or an LLM mutator).
bool search_uses_llm(const SearchConfig& c);
// The budgets a new search runs with: those given, and where it uses an LLM and gives none, the default token
// budget (and the default cost budget when the endpoint's prices are known).
SearchBudgets default_llm_budgets(const SearchConfig& c);

struct SearchCommand {
    enum class Kind {
        Pause,
        Resume,
        Step,
        Stop,
        Pin,
        Unpin,
        Ban,
        Unban,
        SubmitKernel,  // source (+ parent candidate_id, 0 for a root): compiled, forecast, gated like any child
        ForceMeasure,  // candidate_id
        SetGating,     // gating
        Review,        // candidate_id, accept: a person's verdict on a suspect result
    };
    Kind kind = Kind::Pause;
    int64_t candidate_id = 0;
    std::string source;
    std::map<std::string, int64_t> tunables;
    GatingConfig gating;
    bool accept = false;  // Review
};
const char* to_string(SearchCommand::Kind kind);

struct TrajectoryPoint {
    int64_t measurements = 0;
    double best_speedup = 0;
};

struct SearchSummary {
    int64_t run_id = 0;
    RunState state = RunState::Finished;  // finished or failed
    std::string reason;                   // why it ended (budget spent, stopped, space exhausted, error text)
    double best_speedup = 0;
    int64_t best_candidate = 0;
    std::string best_label;
    SearchProgress progress;
    std::vector<TrajectoryPoint> trajectory;                // after each device measurement
    nlohmann::json calibration = nlohmann::json::object();  // metrics_json of forecasts vs measurements
    // The same on the epsilon-audited candidates alone (GatingDecision::Audit: drawn at random from those the gate
    // trusted), the unbiased figure in a gated search; {"n": 0} while none is audited.
    nlohmann::json calibration_audited = nlohmann::json::object();
    TimelineSummary timeline;  // where the wall time went (engine/timeline.h)
};
nlohmann::json summary_json(const SearchSummary& s);

class RequestShapeMemory;
class LocalForecaster;

class SearchRunner {
public:
    // The runner takes the device, the surrogate (nullptr: no forecasts, everything is measured) and the mutators.
    // run_path: the store file; resume: continue the last run in it (the stored config wins, except budgets, which
    // a larger given budget extends). A resumed run goes back to its last checkpoint and continues from there exactly
    // as it would have without the interruption (measurements taken after the checkpoint are reused, not repeated).
    SearchRunner(SearchConfig config, std::string run_path, bool resume, std::unique_ptr<Device> device,
                 std::unique_ptr<Surrogate> surrogate, std::vector<std::unique_ptr<CandidateMutator>> mutators);
    ~SearchRunner();  // stops and joins
    SearchRunner(const SearchRunner&) = delete;
    SearchRunner& operator=(const SearchRunner&) = delete;

    // Called on the runner thread for every event; must not block for long.
    void setEventCallback(SearchEventFn callback);
    void start();                      // spawns the thread
    void post(SearchCommand command);  // thread-safe; applied between steps
    void wait();                       // joins
    // Runs the search on the calling thread (the CLI and the tests); returns when it finished or failed.
    SearchSummary runHere();
    SearchSummary summary() const;  // after wait()/runHere()
    // The request shapes the LLM clients of this run learn: each change is logged in the run, and a resumed run
    // starts from the shapes its log holds. Set before start().
    void setRequestShapeMemory(std::shared_ptr<RequestShapeMemory> memory);
    const SearchConfig& config() const { return m_config; }
    // Where the search's time goes (engine/timeline.h): its phases and its pool's measurements. A timeline given
    // before start() replaces the runner's own (one that already holds the setup's spans).
    std::shared_ptr<Timeline> timeline() const;
    void setTimeline(std::shared_ptr<Timeline> timeline);
    // Which of the family's configurations the device's recording holds, as the set-up found it (make_search_runner):
    // the search uses it where its family has the same text, and works it out itself otherwise. Set before start().
    void setRecordedFamilyCheck(RecordedFamilyCheck check);

    struct State;  // the runner thread's state; defined in the .cpp

private:
    std::unique_ptr<State> m;
    SearchConfig m_config;
    std::thread m_thread;
};

// Builds the device, surrogate and mutators a config names (resources_dir: problems, recordings, prompts) and the
// runner. The local surrogate starts from every recording in the device's recording folder (or the first one)
// except the searched problem's, so that it never learns from what the replay device answers.
// What the set-up before the first candidate does, as it goes: opening the device (starting workers; a GPU worker
// measures its ceilings once per GPU) and the local surrogate's base model (trained once per problem and recording
// folder, then read from the cache). kerncast-cli prepare does both ahead.
struct SetupHooks {
    std::function<void(const std::string& step)> progress;  // a line per step, as it starts and when it took long
    std::shared_ptr<Timeline> timeline;                     // the set-up's spans; the runner goes on with it
};
// A new search's first batch (the reference, the seeds and the random family configurations that fill a round,
// the reference paired with each) is known before it starts: it is drawn from the rng the search starts with
// (search_loop::draw_first). On a device that compiles what it measures (compilePool()), make_search_runner starts
// their compiles here, while the rest of the set-up (the forecaster's base model above all) runs. The first
// measurements then find them compiled, or join them in flight, instead of waiting for NVRTC; the search measures the
// same programs in the same order either way. The configurations the initial screen forecasts are compiled in the
// pool's spare time (Compiler::compileSpare): the screen measures some of them as soon as the first batch is applied.
// `bundle`: as the search sees it (a recording's restriction applied).
void compile_first_programs(Device& device, const ProblemBundle& bundle, const SearchConfig& cfg);

std::unique_ptr<SearchRunner> make_search_runner(const SearchConfig& config, const std::string& resources_dir,
                                                 const std::string& run_path, bool resume,
                                                 const SetupHooks& hooks = {});
// The local surrogate of a search of `problem_dir`'s problem on `device` (the recordings that teach it: the device's
// own folder, else those of the same GPU model), its base model trained or read from the cache.
std::unique_ptr<LocalForecaster> make_local_surrogate(const Device& device, const std::string& resources_dir,
                                                      const std::string& problem_name, uint64_t seed,
                                                      const SetupHooks& hooks = {});

// The stored config of the last run in a store (for --resume).
SearchConfig stored_search_config(const std::string& run_path);

}  // namespace kerncast
