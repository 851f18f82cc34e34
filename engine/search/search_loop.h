#pragma once
// The search runner's thread state and the loop that runs a search (search_runner.cpp), shared by the loop's
// units, one per concern: search_loop.cpp (the loop itself), search_loop_children.cpp, search_loop_gating.cpp,
// search_loop_measuring.cpp, search_loop_steering.cpp, search_loop_checkpoint.cpp, search_loop_space_model.cpp and
// search_loop_recalibration.cpp.
// Private to engine/search.

#include "core/metrics.h"
#include "core/recalibration.h"
#include "engine/gpu/compiler.h"
#include "engine/llm/llm_client.h"
#include "engine/search/search_runner.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/space_model.h"
#include "engine/timeline.h"

#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <set>

namespace kerncast {

struct SearchRunner::State {
    struct Cand {
        Candidate c;
        std::vector<StaticReport> report;
        std::string compile_error;
        std::optional<Forecast> forecast;
        std::optional<GatingDecision> decision;
        std::optional<Measurement> measurement;
    };

    std::string run_path;
    bool resume = false;
    std::unique_ptr<Device> device;
    std::unique_ptr<Surrogate> surrogate;
    std::vector<std::unique_ptr<CandidateMutator>> mutators;
    // The device's compile pool (Device::compilePool), else one made on first use (a candidate the recording does
    // not know).
    std::shared_ptr<Compiler> compiler;

    std::optional<RunStore> store;
    int64_t run_id = 0;
    ProblemBundle bundle;
    std::optional<RecordedFamilyCheck> family_check;  // from the set-up, used once (restrictFamilyToRecording)
    BinScheme scheme = BinScheme::gfV2();
    SearchStrategy strategy;
    SplitMix rng;
    GatingConfig gating;

    std::map<int64_t, Cand> cands;
    std::set<std::string> seen;
    // The last rows this run wrote, stored with every checkpoint: a resumed run goes back to the last checkpoint.
    struct Rows {
        int64_t candidate = 0, forecast = 0, measurement = 0;
    } rows;
    bool seeded = false;  // the reference, the seeds and the initial family (with its screen) are done
    // Measurements of the interrupted session after its last checkpoint, by source hash: the resumed session redoes
    // that step and takes these instead of measuring the same programs again.
    std::map<std::string, std::deque<Measurement>> measured_before;
    std::map<std::string, int64_t> by_normalized;  // normalized_hash -> the first candidate with it
    std::vector<int64_t> last_added;               // the ids addChildren gave, in order (compile failures included)
    std::shared_ptr<RequestShapeMemory> shapes;    // null: no LLM client learns shapes in this run
    LlmProposalLedger llm_ledger;                  // LLM proposals earned and spent (SearchConfig::llm_pacing)
    // The largest LLM spend of one mutation call, of one forecast call and of one iteration so far: what the next
    // must still fit in the token and cost budgets.
    struct Spend {
        int64_t tokens = 0;
        double cost_usd = 0;
    } llm_call_max, llm_step_max, llm_step_start, forecast_call_max;
    bool forecast_call_known = false;  // an LLM forecast call has come back (its size is known)
    std::vector<int64_t> recent_failures;
    std::set<int64_t> accepted_suspects;  // suspect results a person accepted: they enter the archive
    std::optional<double> reference_us;
    std::vector<StaticReport> reference_report;  // the reference candidate's, for every forecast query
    std::vector<ScoredForecast> scored;
    std::vector<ScoredForecast> scored_audited;  // the part of `scored` the epsilon audit chose (decision Audit)
    std::vector<TrajectoryPoint> trajectory;
    // An overlapped search (SearchConfig::overlap): the batches chosen by earlier iterations, queued on the device in
    // this order and applied oldest first (Loop::applyQueued). Their candidates count against the measurement budget.
    struct InFlight {
        int64_t parent = 0;  // whose children they are (0: none, as after a resume of a rescue)
        std::vector<int64_t> ids;
        std::optional<MeasurementPool::Ticket> ticket;  // submitted to a pool; else measured when applied
    };
    std::deque<InFlight> in_flight;
    // The space model's candidates (SearchConfig::space_picks): the family's configurations (computed on first use;
    // empty when the family has none or too many), and the candidates of the current batch it chose, with why.
    std::optional<std::vector<Configuration>> space;
    std::map<int64_t, std::string> space_picked;
    // The space model's refining pick when it is a configuration the run already holds unmeasured (a child the gate
    // trusted earlier): measured in this batch beside the new children, with why.
    std::vector<std::pair<int64_t, std::string>> space_held_picks;
    std::set<Configuration> space_index;  // *space as a set, for neighbour lookups
    // The space model as last fitted (refreshSpaceModel()), and how far its forecasts are mixed into the surrogate's.
    struct SpaceFit {
        std::shared_ptr<SpaceModel> model;
        std::vector<Configuration> measured;
        std::set<Configuration> known;  // every configuration the run holds, measured or not
        double sigma_scale = 1;         // the spread that makes the out-of-fold errors standard normal
        double weight = 0;              // the space model's share in a family configuration's forecast
        size_t scored = 0;              // measured configurations with a forecast the weight was fitted on
    };
    std::optional<SpaceFit> space_fit;
    // The recalibration of forecasts (SearchConfig::recalibrate) as last chosen on the run's measured outcomes.
    RecalibrationChoice recalibration;
    int64_t inFlightCount() const {
        int64_t n = 0;
        for (const InFlight& b : in_flight)
            n += static_cast<int64_t>(b.ids.size());
        return n;
    }
    SearchProgress progress;
    int64_t seq = 0;
    int64_t iteration = 0;
    double elapsed_before = 0;  // from earlier sessions of a resumed run
    std::chrono::steady_clock::time_point started;

    // Where the search's wall time goes (engine/timeline.h): the loop's phases and the pool's measurements.
    std::shared_ptr<Timeline> timeline = std::make_shared<Timeline>();

    SearchEventFn callback;
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<SearchCommand> commands;
    bool paused = false;
    int steps_allowed = 0;
    bool stop_requested = false;
    std::string end_reason;
    SearchSummary summary;
};

namespace search_loop {

// The programs a new search starts from, in the order it measures them: the reference, then each seed.
std::vector<Candidate> root_candidates(const ProblemBundle& bundle);
// A candidate as the device is asked to measure it, and the reference as it is timed beside every measurement: the
// keys the compile cache finds them by.
ProgramRef measured_program(const Candidate& c);
ProgramRef paired_reference(const ProblemBundle& bundle);

// SearchConfig::round: `chosen` candidates topped up to a multiple of the round, within `room` measurements of the
// budget; as chosen when the `available` ones cannot fill it.
size_t rounded_to_round(size_t chosen, size_t available, int round, int64_t room);

// A new search's first draw (Loop::seedPopulation), from its fresh rng: the first batch (the roots, unscreened the
// random family configurations measured with them, then those filling it up to a round) and, where a surrogate
// screens them (SearchConfig::initial_screen), the random configurations it forecasts to keep `family` of.
struct FirstDraw {
    bool screen = false;
    size_t family = 0;
    std::vector<Candidate> batch;
    std::vector<Candidate> screened;
};
FirstDraw draw_first(const ProblemBundle& bundle, const SearchConfig& cfg, bool surrogate, int64_t room, SplitMix& rng);

// The compile pool's counts so far on the search's timeline (TimelineSummary::compiles), where a view reads them.
inline void note_compiles(const Compiler* compiler, Timeline& timeline) {
    if (!compiler)
        return;
    const Compiler::Stats c = compiler->stats();
    timeline.setCompiles({static_cast<int64_t>(c.compiles),
                          static_cast<int64_t>(c.memory_hits + c.disk_hits + c.joined), static_cast<int64_t>(c.spare),
                          static_cast<int64_t>(c.helper_processes)});
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs the search; a class so that the steps can share the state without a long parameter list.
class Loop {
public:
    Loop(SearchRunner::State& s, SearchConfig& config) : s(s), cfg(config) {}

    void run();

private:
    using Cand = SearchRunner::State::Cand;
    using Phase = TimelinePhase;
    // The loop's phase until the end of the enclosing block (engine/timeline.h).
    Timeline::Scope phase(Phase p) const { return Timeline::Scope(s.timeline.get(), p); }

    void emit(SearchEvent e) {
        e.run_id = s.run_id;
        e.seq = ++s.seq;
        s.progress.elapsed_s = s.elapsed_before + seconds_since(s.started);
        e.progress = s.progress;
        if (e.kind == SearchEvent::Kind::Progress && s.timeline)
            note_compiles(s.compiler.get(), *s.timeline);
        if (s.callback)
            s.callback(e);
    }
    void emitSimple(SearchEvent::Kind kind, const std::string& message = {}) {
        SearchEvent e;
        e.kind = kind;
        e.message = message;
        emit(std::move(e));
    }

    void openStore();
    void startFresh();
    void requireRecording() const;
    size_t restrictFamilyToRecording();
    bool deviceCanMeasure(int64_t id);
    void storeProblem();
    void restore();
    void seedPopulation();
    bool budgetLeft(std::string& why) const;
    // Measurements the budget leaves after those made and those in flight.
    int64_t measurementsRoom() const { return cfg.budgets.measurements - s.progress.measurements - s.inFlightCount(); }
    bool measurementsLeft() const { return measurementsRoom() > 0; }
    int64_t forecastBudget() const {
        return cfg.budgets.forecasts > 0 ? cfg.budgets.forecasts : 100 * cfg.budgets.measurements;
    }
    void iterate();
    bool rescue();
    // Stores a forecast (or the failure) and reports it; returns the forecast when there is one.
    const Forecast* recordForecast(int64_t id, const ForecastResult& result);
    // Stores a gating decision as an event and reports it.
    void recordGating(int64_t id, GatingDecision decision, const std::string& reason,
                      nlohmann::json extra = nlohmann::json::object());
    void screenInitial(const std::vector<int64_t>& ids, size_t keep);
    std::vector<int64_t> addChildren(std::vector<Candidate> children);
    // The space model's choice for this iteration (SearchConfig::space_picks), as children of the best candidate,
    // each with the reason its gating decision will give.
    std::vector<std::pair<Candidate, std::string>> spacePicks();
    // Refits the space model on the run's measured family configurations (SearchConfig::space_picks > 0), with its
    // spread calibrated and its share in the forecasts fitted out of fold; nothing before kSpaceModelAfter.
    void refreshSpaceModel();
    // The space model's forecast of a family configuration against the anchor (log speedup anchor_log over the
    // reference), mixed into f by the fitted share; f unchanged when there is none.
    void mixSpaceForecast(Forecast& f, const Candidate& c) const;
    // Chooses the recalibration again (SearchConfig::recalibrate, choose_recalibration) on every measured
    // candidate's forecast as the surrogate gave it and the bin that came true.
    void refreshRecalibration();
    // Recalibrates a forecast's bins, keeping the surrogate's in Forecast::uncalibrated; where the check declined the
    // recalibration, says so in the reasoning and leaves the bins; f unchanged before the check could run.
    void recalibrate(Forecast& f) const;
    void forecastAndGate(const std::vector<int64_t>& ids, bool initial);
    // Forecasts and gates; returns the candidates to measure, most promising first.
    std::vector<int64_t> gate(const std::vector<int64_t>& ids, bool initial);
    // An overlapped search: queues a batch (as far as the budget goes) without waiting for it, and applies the one
    // queued before (the strategy then counts its parent's expansion).
    SearchRunner::State::InFlight dispatch(const std::vector<int64_t>& ids, int64_t parent);
    // Applies the oldest batch in flight.
    void finishInFlight();
    // An overlapped search after queuing a batch: applies the oldest batches while those queued behind them hold
    // SearchConfig::ahead measurements or more than kBatchesInFlight batches are queued.
    void applyQueued();
    // Whether an interrupted session measured any of these after its checkpoint (the store answers for them).
    bool measuredBefore(const std::vector<int64_t>& ids) const;
    // Those not measured yet, once each, as far as the measurement budget goes (a batch in flight counted).
    std::vector<int64_t> withinBudget(const std::vector<int64_t>& ids) const;
    MeasurementPool::Ticket submitTo(MeasurementPool& pool, const std::vector<int64_t>& ids);
    // Applies a submitted batch's results in its order, reporting the pool's state meanwhile.
    void applyPoolBatch(MeasurementPool& pool, MeasurementPool::Ticket ticket, const std::vector<int64_t>& ids);
    void capMeasured(const std::vector<GatingInput>& inputs, std::vector<GatingOutcome>& outcomes) const;
    // SearchConfig::round: how many measurements a batch of `chosen` new ones takes: a multiple of the round, cut
    // at the budget; `chosen` itself when `available` candidates cannot fill that.
    size_t roundedBatch(size_t chosen, size_t available) const;
    // Tops the batch the gate chose up to a round with the candidates it passed over; `waiting` more candidates
    // (waitingOutside) can fill what these cannot.
    void topUpToRound(const std::vector<int64_t>& ids, const std::vector<GatingInput>& inputs,
                      std::vector<GatingOutcome>& outcomes, size_t waiting) const;
    // Candidates that earlier batches trusted or discarded without a measurement (with a forecast, compiled, not in
    // `batch`), the most likely to beat the best first: what fills a round the batch's own cannot.
    struct Waiting {
        int64_t id;
        double p_above, mean;
    };
    std::vector<Waiting> waitingOutside(const std::vector<int64_t>& batch) const;
    // What the batch's own candidates could not fill of a round comes from those waiting; returns them (their
    // gating stored).
    std::vector<int64_t> fillRoundFromWaiting(const std::vector<int64_t>& chosen, const std::vector<Waiting>& waiting);
    void measure(int64_t id);
    // Measures candidates in this order while the budget lasts: in parallel when the device is a pool, applied in
    // this order either way, so that a seed gives the same search with one worker or many.
    void measureInOrder(const std::vector<int64_t>& ids);
    MeasureRequest requestFor(const Cand& c) const;
    void applyMeasurement(int64_t id, MeasureOutcome& out);
    void recordPoolNotes(MeasurementPool& pool);
    void applyCommands();
    void applyCommand(const SearchCommand& c);
    void checkpoint();
    bool expandable(const Candidate& c) const {
        for (const auto& mu : s.mutators)
            if (mu->canExpand(c, s.bundle))
                return true;
        return false;
    }
    ForecastQuery queryFor(const Cand& c) const;
    std::optional<ForecastAnchor> anchorOf(const Cand& c) const;
    MutationExample exampleOf(int64_t id) const;
    struct ReportJob {
        std::optional<std::vector<StaticReport>> recorded;  // the replay device's, when it knows the program
        std::string error;                                  // the program did not parse
        std::shared_future<CompileResult> compile;          // else the compile in flight
    };
    // SearchConfig::static_reports "measured": a family configuration's static report comes with its measurement and
    // is kept out of its forecast queries.
    bool reportAtMeasurement(const Candidate& c) const {
        return cfg.static_reports == "measured" && s.bundle.family && !s.bundle.family->tunables.empty() &&
               c.source == s.bundle.family->source;
    }
    ReportJob startStaticReport(const Candidate& c);
    void compileAhead(const std::vector<int64_t>& ids, bool spare = false);
    void finishStaticReport(Cand& c, ReportJob& job);
    // shown: a static report that came with the measurement and stays out of the forecasts (reportAtMeasurement),
    // for the Measured event to carry to the views.
    void noteMeasured(int64_t id, bool restoring, std::vector<StaticReport> shown = {});
    bool admit(int64_t id, const Measurement& m);
    void noteNewBest(int64_t id, double speedup);
    void review(const SearchCommand& c);
    void updateCalibration();
    // LLM accounting: stores each call (candidate 0 for none), counts its tokens, cost and outcome, and logs the
    // request shapes the clients learned meanwhile.
    void recordLlmCalls(std::vector<LlmCall> calls, int64_t candidate_id);
    void noteRequestShapes();
    void noteSpend(const LlmCall& call);  // by kind, and the largest mutation call
    void restoreLlmAccounting();
    // Children whose normalized source and tunables match a candidate of the run (or an earlier child) are not
    // added: each is logged as a "duplicate" event pointing at the original, with its LLM call (outcome
    // "duplicate"). The others are returned with their calls.
    std::vector<Candidate> dropDuplicates(std::vector<Candidate> children, std::vector<std::optional<LlmCall>>& calls,
                                          int64_t parent, std::vector<bool>* dropped = nullptr);
    // LLM proposals for the parent in this expansion (SearchConfig::llm_pacing); -1 when, with nothing else to
    // propose, a waiting candidate was measured instead to earn one.
    int llmShare(int64_t parent, bool only_llm);
    // The parents LLM proposals go to (LlmPacing::parents, elite_parents of them), best first.
    std::vector<int64_t> llmParents() const;
    // Whether an iteration as large as the largest so far still fits the token and cost budgets.
    bool nextStepFits(std::string& why) const;
    // The LLM forecaster's calls within the token and cost budgets (forecastWithinBudget): whether this search's
    // forecasts spend from them, what one candidate's forecast may spend, and how many more forecasts what is left
    // covers after `pending` (spent, not recorded yet); why: the budget that limits them.
    bool forecastsSpend() const;
    SearchRunner::State::Spend forecastSize() const;
    size_t forecastsAffordable(const SearchRunner::State::Spend& pending, std::string* why = nullptr) const;
    // The queries' forecasts as far as the budgets go, in order: fewer results than queries when they run out.
    std::vector<ForecastResult> forecastWithinBudget(const std::vector<ForecastQuery>& queries);

    SearchRunner::State& s;
    SearchConfig& cfg;
};

}  // namespace search_loop
}  // namespace kerncast
