#include "engine/search/search_runner.h"

#include "core/error.h"
#include "core/metrics.h"
#include "core/problem_fingerprint.h"
#include "core/suspect_review.h"
#include "core/untrusted_json.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/gpu_device.h"
#include "engine/llm/llm_client.h"
#include "engine/replay/replay_device.h"
#include "engine/surrogate/forecast_query.h"
#include "engine/surrogate/space_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

void to_json(nlohmann::json& j, const SearchBudgets& b) {
    j = {{"measurements", b.measurements},
         {"forecasts", b.forecasts},
         {"tokens", b.tokens},
         {"cost_usd", b.cost_usd},
         {"wall_s", b.wall_s}};
}

SearchBudgets search_budgets_from_json(const nlohmann::json& j) {
    SearchBudgets b;
    b.measurements = j.value("measurements", b.measurements);
    b.forecasts = j.value("forecasts", b.forecasts);
    b.tokens = j.value("tokens", b.tokens);
    b.cost_usd = j.value("cost_usd", b.cost_usd);
    b.wall_s = j.value("wall_s", b.wall_s);
    if (b.measurements < 1)
        throw Error("the measurement budget must be at least 1");
    if (b.forecasts < 0 || b.tokens < 0 || !(b.cost_usd >= 0) || !(b.wall_s >= 0))
        throw Error("budgets: 'forecasts', 'tokens', 'cost_usd' and 'wall_s' must not be negative (0: no limit), "
                    "got " +
                    j.dump());
    return b;
}

SearchBudgets extended_budgets(const SearchBudgets& stored, const SearchBudgets& given) {
    SearchBudgets b = stored;
    b.measurements = std::max(stored.measurements, given.measurements);
    // 0 is "no limit" (forecasts: 100 per measurement): a stored 0 stays, a given 0 extends nothing.
    const auto larger = [](auto stored_value, auto given_value) {
        return stored_value != 0 && given_value > stored_value ? given_value : stored_value;
    };
    b.forecasts = larger(stored.forecasts, given.forecasts);
    b.tokens = larger(stored.tokens, given.tokens);
    b.cost_usd = larger(stored.cost_usd, given.cost_usd);
    b.wall_s = larger(stored.wall_s, given.wall_s);
    return b;
}

void to_json(nlohmann::json& j, const SearchConfig& c) {
    j = {{"problem_dir", c.problem_dir},
         {"device", c.device},
         {"surrogate", c.surrogate},
         {"mutators", c.mutators},
         {"gating", c.gating},
         {"strategy", c.strategy},
         {"budgets", c.budgets},
         {"seed", c.seed},
         {"batch", c.batch},
         {"measure_per_parent", c.measure_per_parent},
         {"space_picks", c.space_picks},
         {"initial_family", c.initial_family},
         {"initial_screen", c.initial_screen},
         {"inspirations", c.inspirations},
         {"llm", c.llm},
         {"samples", c.samples},
         {"abstain", c.abstain},
         {"llm_pacing", c.llm_pacing}};
    if (c.overlap)
        j["overlap"] = true;
    if (c.round != 1)
        j["round"] = c.round;
    if (pool_requested(c.pool))
        j["pool"] = c.pool;
}

SearchConfig search_config_from_json(const nlohmann::json& j) {
    SearchConfig c;
    try {
        c.problem_dir = j.at("problem_dir").get<std::string>();
        c.device = j.value("device", c.device);
        c.surrogate = j.value("surrogate", c.surrogate);
        c.mutators = j.value("mutators", c.mutators);
        if (j.contains("gating"))
            c.gating = gating_config_from_json(j["gating"]);
        if (j.contains("strategy"))
            c.strategy = strategy_config_from_json(j["strategy"]);
        if (j.contains("budgets"))
            c.budgets = search_budgets_from_json(j["budgets"]);
        c.seed = j.value("seed", c.seed);
        c.batch = j.value("batch", c.batch);
        c.measure_per_parent = j.value("measure_per_parent", c.measure_per_parent);
        c.space_picks = j.value("space_picks", 0);
        if (c.batch < 0 || c.measure_per_parent < 0)
            throw Error("search settings: 'batch' and 'measure_per_parent' must not be negative");
        c.initial_family = j.value("initial_family", c.initial_family);
        c.initial_screen = j.value("initial_screen", c.initial_screen);
        c.inspirations = j.value("inspirations", c.inspirations);
        c.llm = j.value("llm", nlohmann::json::object());
        if (j.contains("pool"))
            c.pool = pool_config_from_json(j["pool"]);
        c.samples = j.value("samples", c.samples);
        c.abstain = j.value("abstain", c.abstain);
        if (j.contains("llm_pacing"))
            c.llm_pacing = llm_pacing_from_json(j["llm_pacing"]);
        c.overlap = j.value("overlap", c.overlap);
        c.round = j.value("round", c.round);
        if (c.round < 1)
            throw Error("search settings: 'round' must be at least 1, got " + std::to_string(c.round));
        if (c.samples < 1)
            throw Error("search settings: 'samples' must be at least 1");
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("search settings: ") + e.what());
    }
    return c;
}

bool search_uses_llm(const SearchConfig& c) {
    return c.surrogate == "llm" || std::any_of(c.mutators.begin(), c.mutators.end(),
                                               [](const std::string& m) { return m.rfind("llm-", 0) == 0; });
}

SearchBudgets default_llm_budgets(const SearchConfig& c) {
    SearchBudgets b = c.budgets;
    if (!search_uses_llm(c))
        return b;
    const double measurements = static_cast<double>(b.measurements);
    if (b.tokens == 0)
        b.tokens = kLlmTokensPerMeasurement * b.measurements;
    const bool priced =
        c.llm.is_object() && (c.llm.value("price_in_per_mtok", 0.0) > 0 || c.llm.value("price_out_per_mtok", 0.0) > 0);
    if (b.cost_usd == 0 && priced)
        b.cost_usd = kLlmUsdPerMeasurement * measurements;
    return b;
}

namespace {

nlohmann::json spend_json(const LlmSpend& spend, int64_t measurements) {
    const double m = static_cast<double>(std::max<int64_t>(measurements, 1));
    return {{"calls", spend.calls},
            {"tokens", spend.tokens},
            {"cost_usd", spend.cost_usd},
            {"duplicates", spend.duplicates},
            {"tokens_per_measurement", static_cast<double>(spend.tokens) / m},
            {"cost_per_measurement", spend.cost_usd / m}};
}

}  // namespace

const char* to_string(SearchCommand::Kind kind) {
    using K = SearchCommand::Kind;
    switch (kind) {
    case K::Pause:
        return "pause";
    case K::Resume:
        return "resume";
    case K::Step:
        return "step";
    case K::Stop:
        return "stop";
    case K::Pin:
        return "pin_parent";
    case K::Unpin:
        return "unpin_parent";
    case K::Ban:
        return "ban_parent";
    case K::Unban:
        return "unban_parent";
    case K::SubmitKernel:
        return "submit_kernel";
    case K::ForceMeasure:
        return "force_measure";
    case K::SetGating:
        return "gating_changed";
    case K::Review:
        return "review";
    }
    return "unknown";
}

const char* to_string(SearchEvent::Kind kind) {
    using K = SearchEvent::Kind;
    switch (kind) {
    case K::RunStarted:
        return "run_started";
    case K::CandidateProposed:
        return "candidate_proposed";
    case K::Forecast:
        return "forecast";
    case K::Gating:
        return "gating";
    case K::Measured:
        return "measured";
    case K::NewBest:
        return "new_best";
    case K::Command:
        return "command";
    case K::Progress:
        return "progress";
    case K::Pool:
        return "pool";
    case K::Finished:
        return "finished";
    case K::Failed:
        return "failed";
    }
    return "unknown";
}

nlohmann::json summary_json(const SearchSummary& s) {
    nlohmann::json traj = nlohmann::json::array();
    for (const auto& p : s.trajectory)
        traj.push_back({{"measurements", p.measurements}, {"best_speedup", p.best_speedup}});
    return {
        {"run_id", s.run_id},
        {"state", to_string(s.state)},
        {"reason", s.reason},
        {"best_speedup", s.best_speedup},
        {"best_candidate", s.best_candidate},
        {"best_label", s.best_label},
        {"measurements", s.progress.measurements},
        {"forecasts", s.progress.forecasts},
        {"candidates", s.progress.candidates},
        {"tokens", s.progress.tokens},
        {"cost_usd", s.progress.cost_usd},
        {"llm_calls", s.progress.llm_calls},
        {"llm_truncated", s.progress.llm_truncated},
        {"abstained", s.progress.abstained},
        {"abstain_rate", s.progress.forecasts > 0 ? double(s.progress.abstained) / double(s.progress.forecasts) : 0.0},
        {"duplicates", s.progress.duplicates},
        {"tokens_per_measurement", s.progress.tokensPerMeasurement()},
        {"cost_per_measurement", s.progress.costPerMeasurement()},
        {"llm",
         {{"forecast", spend_json(s.progress.llm_forecast, s.progress.measurements)},
          {"mutate_rewrite", spend_json(s.progress.llm_rewrite, s.progress.measurements)},
          {"mutate_diff", spend_json(s.progress.llm_diff, s.progress.measurements)},
          {"budget_tokens", s.progress.budget_tokens},
          {"budget_cost_usd", s.progress.budget_cost_usd}}},
        {"elapsed_s", s.progress.elapsed_s},
        {"trajectory", traj},
        {"calibration", s.calibration},
        {"calibration_audited", s.calibration_audited}};
}

// ---------------------------------------------------------------------------------------------------------------

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
    std::unique_ptr<Compiler> compiler;  // made on first use (a candidate the recording does not know)

    std::optional<RunStore> store;
    int64_t run_id = 0;
    ProblemBundle bundle;
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
    // The largest LLM spend of one mutation call and of one iteration so far: what the next must still fit in the
    // token and cost budgets.
    struct Spend {
        int64_t tokens = 0;
        double cost_usd = 0;
    } llm_call_max, llm_step_max, llm_step_start;
    std::vector<int64_t> recent_failures;
    std::set<int64_t> accepted_suspects;  // suspect results a person accepted: they enter the archive
    std::optional<double> reference_us;
    std::vector<StaticReport> reference_report;  // the reference candidate's, for every forecast query
    std::vector<ScoredForecast> scored;
    std::vector<ScoredForecast> scored_audited;  // the part of `scored` the epsilon audit chose (decision Audit)
    std::vector<TrajectoryPoint> trajectory;
    // An overlapped search (SearchConfig::overlap): the batch chosen by the last iteration, queued on the device and
    // applied by the next one. Its candidates count against the measurement budget.
    struct InFlight {
        int64_t parent = 0;  // whose children they are (0: none, as after a resume of a rescue)
        std::vector<int64_t> ids;
        std::optional<MeasurementPool::Ticket> ticket;  // submitted to a pool; else measured when applied
    };
    std::optional<InFlight> in_flight;
    // The space model's candidates (SearchConfig::space_picks): the family's configurations (computed on first use;
    // empty when the family has none or too many), and the candidates of the current batch it chose, with why.
    std::optional<std::vector<Configuration>> space;
    std::map<int64_t, std::string> space_picked;
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
    int64_t inFlightCount() const { return in_flight ? static_cast<int64_t>(in_flight->ids.size()) : 0; }
    SearchProgress progress;
    int64_t seq = 0;
    int64_t iteration = 0;
    double elapsed_before = 0;  // from earlier sessions of a resumed run
    std::chrono::steady_clock::time_point started;

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

SearchRunner::SearchRunner(SearchConfig config, std::string run_path, bool resume, std::unique_ptr<Device> device,
                           std::unique_ptr<Surrogate> surrogate,
                           std::vector<std::unique_ptr<CandidateMutator>> mutators)
    : m(std::make_unique<State>()), m_config(std::move(config)) {
    if (!device)
        throw Error("a search needs a device");
    if (mutators.empty())
        throw Error("a search needs at least one mutator");
    m->run_path = std::move(run_path);
    m->resume = resume;
    m->device = std::move(device);
    m->surrogate = std::move(surrogate);
    m->mutators = std::move(mutators);
}

SearchRunner::~SearchRunner() {
    if (m_thread.joinable()) {
        SearchCommand stop;
        stop.kind = SearchCommand::Kind::Stop;
        post(stop);
        m_thread.join();
    }
}

void SearchRunner::setEventCallback(SearchEventFn callback) { m->callback = std::move(callback); }

void SearchRunner::post(SearchCommand command) {
    {
        std::lock_guard<std::mutex> lock(m->mutex);
        m->commands.push_back(std::move(command));
    }
    m->cv.notify_all();
}

void SearchRunner::start() {
    if (m_thread.joinable())
        throw Error("the search is already running");
    m_thread = std::thread([this] { runHere(); });
}

void SearchRunner::wait() {
    if (m_thread.joinable())
        m_thread.join();
}

SearchSummary SearchRunner::summary() const { return m->summary; }

void SearchRunner::setRequestShapeMemory(std::shared_ptr<RequestShapeMemory> memory) { m->shapes = std::move(memory); }

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs the search; a class so that the steps can share the state without a long parameter list.
class Loop {
public:
    Loop(SearchRunner::State& s, SearchConfig& config) : s(s), cfg(config) {}

    void run();

private:
    using Cand = SearchRunner::State::Cand;

    void emit(SearchEvent e) {
        e.run_id = s.run_id;
        e.seq = ++s.seq;
        s.progress.elapsed_s = s.elapsed_before + seconds_since(s.started);
        e.progress = s.progress;
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
    bool deviceCanMeasure(int64_t id);
    void storeProblem();
    void restore();
    void seedPopulation();
    bool budgetLeft(std::string& why) const;
    bool measurementsLeft() const { return s.progress.measurements + s.inFlightCount() < cfg.budgets.measurements; }
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
    void forecastAndGate(const std::vector<int64_t>& ids, bool initial);
    // Forecasts and gates; returns the candidates to measure, most promising first.
    std::vector<int64_t> gate(const std::vector<int64_t>& ids, bool initial);
    // An overlapped search: queues a batch (as far as the budget goes) without waiting for it, and applies the one
    // queued before (the strategy then counts its parent's expansion).
    SearchRunner::State::InFlight dispatch(const std::vector<int64_t>& ids, int64_t parent);
    void finishInFlight();
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
    ReportJob startStaticReport(const Candidate& c);
    void finishStaticReport(Cand& c, ReportJob& job);
    void noteMeasured(int64_t id, bool restoring);
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
    // Whether an iteration as large as the largest so far still fits the token and cost budgets.
    bool nextStepFits(std::string& why) const;

    SearchRunner::State& s;
    SearchConfig& cfg;
};

void Loop::openStore() {
    if (!fs::exists(s.run_path)) {
        if (s.resume)
            throw Error(SourceLocation{s.run_path, 0}, "no run file to resume");
        s.store.emplace(RunStore::create(s.run_path));
        return;
    }
    s.store.emplace(RunStore::open(s.run_path));
    if (!s.store->runs().empty()) {
        if (!s.resume)
            throw Error(SourceLocation{s.run_path, 0},
                        "the run file exists already: pass --resume to continue it, or choose another file");
        return;
    }
    // A file without a run: the search was killed before it stored its settings. It starts over in the same file.
    if (cfg.problem_dir.empty())
        throw Error(SourceLocation{s.run_path, 0},
                    "the run file holds no run (the search was stopped before it stored its settings): start it "
                    "again with --problem and the other settings");
    s.resume = false;
}

// The anchor a candidate is forecast against (ARCHITECTURE §4): its parent once the parent is measured correct, else
// the reference (empty). A re-forecast after the parent's measurement therefore uses the parent.
std::optional<ForecastAnchor> Loop::anchorOf(const Cand& c) const {
    if (!c.c.parent_id)
        return std::nullopt;
    const auto p = s.cands.find(c.c.parent_id);
    if (p == s.cands.end() || !p->second.measurement || p->second.measurement->status != Status::Ok ||
        !(p->second.measurement->speedup > 0) || !std::isfinite(p->second.measurement->speedup))
        return std::nullopt;
    const Cand& parent = p->second;
    if (parent.c.mutator == Mutator::Reference)
        return std::nullopt;
    return measured_anchor(parent.c, parent.report, *parent.measurement);
}

ForecastQuery Loop::queryFor(const Cand& c) const {
    QueryContext ctx;
    ctx.reference_static_report = s.reference_report;
    ctx.reference_time_us = s.reference_us;
    ctx.device = s.device->fingerprint();
    // The roofline ceilings (measured DRAM bandwidth, FMA peak): the local surrogate judges how close an anchor is
    // to the floor with them.
    ctx.ceilings = s.device->ceilings();
    ctx.anchor = anchorOf(c);
    return build_forecast_query(s.bundle.problem, c.c.source, c.c.tunables, c.report, ctx);
}

MutationExample Loop::exampleOf(int64_t id) const {
    MutationExample e;
    const Cand& c = s.cands.at(id);
    e.candidate = c.c;
    e.static_report = c.report;
    if (c.measurement && c.measurement->status == Status::Ok)
        e.speedup = c.measurement->speedup;
    else if (!c.compile_error.empty())
        e.failure = c.compile_error;
    else if (c.measurement)
        e.failure = std::string(to_string(c.measurement->status)) + ": " + c.measurement->reason;
    return e;
}

// The static report: the recording's (made by the real compiler on the recording machine) when the replay device
// knows the program, else a real NVRTC/nvJitLink compile here. Started for every child of a batch before any is
// stored, so that the compiles run in parallel on the compiler's pool (one compile of a large kernel takes about a
// second, and a gated batch has dozens of children); the results are then taken in order, as before.
Loop::ReportJob Loop::startStaticReport(const Candidate& c) {
    ReportJob job;
    if (auto recorded = s.device->recordedStaticReport(s.bundle.problem.name, c.source_hash)) {
        job.recorded = std::move(*recorded);
        return job;
    }
    if (!s.compiler)
        s.compiler = std::make_unique<Compiler>();
    CompileRequest req;
    req.source = c.source;
    req.file_name = c.label.rfind("seed:", 0) == 0 ? c.label.substr(5) : "candidate.cu";
    req.defines = c.tunables;
    try {
        req.kernel_names = KernelProgram::parse(c.source, req.file_name).kernelNames();
    } catch (const Error& e) {
        job.error = e.what();
        return job;
    }
    job.compile = s.compiler->compileAsync(std::move(req));
    return job;
}

void Loop::finishStaticReport(Cand& c, ReportJob& job) {
    if (job.recorded) {
        c.report = std::move(*job.recorded);
        return;
    }
    if (!job.error.empty()) {
        c.compile_error = job.error;
        return;
    }
    const CompileResult& r = job.compile.get();
    if (!r.ok) {
        c.compile_error = r.log.empty() ? "compilation failed" : r.log;
        return;
    }
    c.report = r.kernels;
}

std::vector<int64_t> Loop::addChildren(std::vector<Candidate> children) {
    std::vector<int64_t> ids;
    s.last_added.clear();
    std::vector<ReportJob> reports;
    reports.reserve(children.size());
    for (auto& child : children) {
        if (child.source_hash.empty())
            child.source_hash = content_hash(child.source, child.tunables);
        reports.push_back(startStaticReport(child));
    }
    for (size_t i = 0; i < children.size(); ++i) {
        const Candidate& child = children[i];
        Cand c;
        c.c = child;
        finishStaticReport(c, reports[i]);
        {
            auto tx = s.store->transaction();
            s.store->addCandidate(s.run_id, c.c);
            if (!c.report.empty())
                s.store->addStaticReports(c.c.id, c.report);
            int64_t measurement_row = 0;
            if (!c.compile_error.empty()) {
                Measurement m;
                m.status = Status::CompileError;
                m.reason = c.compile_error;
                m.device_kind = "compiler";
                measurement_row = s.store->addMeasurement(c.c.id, m);
                c.measurement = m;
            }
            tx.commit();
            s.rows.candidate = c.c.id;
            s.rows.measurement = std::max(s.rows.measurement, measurement_row);
        }
        s.seen.insert(c.c.source_hash);
        s.by_normalized.emplace(normalized_hash(c.c.source, c.c.tunables), c.c.id);
        s.last_added.push_back(c.c.id);
        if (c.c.mutator == Mutator::Reference)
            s.reference_report = c.report;
        ++s.progress.candidates;
        const int64_t id = c.c.id;
        s.cands[id] = c;
        SearchEvent e;
        e.kind = SearchEvent::Kind::CandidateProposed;
        e.candidate_id = id;
        e.candidate = c.c;
        e.static_report = c.report;
        e.compile_error = c.compile_error;
        emit(std::move(e));
        if (!c.compile_error.empty())
            s.recent_failures.push_back(id);
        else
            ids.push_back(id);
    }
    return ids;
}

const Forecast* Loop::recordForecast(int64_t id, const ForecastResult& result) {
    ++s.progress.forecasts;
    const bool counted = !result.calls.empty();  // the calls carry the tokens and cost (failures' too)
    recordLlmCalls(result.calls, id);
    if (result.deferred) {
        ++s.progress.abstained;
        s.store->addEvent(s.run_id, "forecast_deferred", {{"candidate", id}, {"reason", result.error}});
        return nullptr;
    }
    if (!result.forecast) {
        // "asked": the surrogate was asked and failed, which counts as a forecast (a query that could not even be
        // built does not); a resumed run counts these events.
        s.store->addEvent(s.run_id, "forecast_failed", {{"candidate", id}, {"error", result.error}, {"asked", true}});
        return nullptr;
    }
    Forecast f = *result.forecast;
    // The runner chose the anchor; the stored forecast says which it was, whatever the surrogate filled in.
    const std::optional<ForecastAnchor> anchor = anchorOf(s.cands.at(id));
    f.anchor_id = anchor ? anchor->candidate_id : 0;
    f.anchor_speedup = anchor ? anchor->speedup : 1.0;
    mixSpaceForecast(f, s.cands.at(id).c);
    s.rows.forecast = s.store->addForecast(id, f);
    if (!counted) {
        s.progress.tokens += f.tokens_in + f.tokens_out;
        s.progress.cost_usd += f.cost_usd;
    }
    s.cands[id].forecast = f;
    SearchEvent e;
    e.kind = SearchEvent::Kind::Forecast;
    e.candidate_id = id;
    e.forecast = f;
    emit(std::move(e));
    return &*s.cands[id].forecast;
}

void Loop::recordLlmCalls(std::vector<LlmCall> calls, int64_t candidate_id) {
    for (LlmCall& call : calls) {
        call.candidate_id = candidate_id;
        s.store->addLlmCall(s.run_id, call);
        ++s.progress.llm_calls;
        s.progress.tokens += call.tokens_in + call.tokens_out;
        s.progress.cost_usd += call.cost_usd;
        s.progress.llm_truncated += call.outcome == "truncated";
        noteSpend(call);
    }
    noteRequestShapes();
}

void Loop::noteSpend(const LlmCall& call) {
    LlmSpend& spend = call.kind == "forecast"         ? s.progress.llm_forecast
                      : call.kind == "mutate_rewrite" ? s.progress.llm_rewrite
                                                      : s.progress.llm_diff;
    ++spend.calls;
    spend.tokens += call.tokens_in + call.tokens_out;
    spend.cost_usd += call.cost_usd;
    spend.duplicates += call.outcome == "duplicate";
    if (call.kind != "forecast") {
        s.llm_call_max.tokens = std::max(s.llm_call_max.tokens, call.tokens_in + call.tokens_out);
        s.llm_call_max.cost_usd = std::max(s.llm_call_max.cost_usd, call.cost_usd);
    }
}

void Loop::noteRequestShapes() {
    if (!s.shapes)
        return;
    for (const auto& change : s.shapes->takeChanges())
        s.store->addEvent(
            s.run_id, "llm_request_shape",
            {{"endpoint", change.endpoint}, {"model", change.model}, {"shape", change.shape}, {"why", change.why}});
}

// Tokens, cost and counters of the calls stored so far (mutations included); a run written before llm_calls
// existed counts its forecasts' tokens.
void Loop::restoreLlmAccounting() {
    const LlmTotals totals = s.store->llmTotals(s.run_id);
    if (totals.calls == 0)
        return;
    s.progress.tokens = totals.tokens_in + totals.tokens_out;
    s.progress.cost_usd = totals.cost_usd;
    s.progress.llm_calls = totals.calls;
    s.progress.llm_truncated = totals.truncated;
    s.progress.abstained = totals.deferred;
    s.progress.forecasts += totals.deferred;  // asked, though no forecast row was stored for them
    for (const LlmCall& call : s.store->llmCalls(s.run_id))
        noteSpend(call);
}

std::vector<Candidate> Loop::dropDuplicates(std::vector<Candidate> children, std::vector<std::optional<LlmCall>>& calls,
                                            int64_t parent, std::vector<bool>* dropped) {
    if (dropped)
        dropped->assign(children.size(), false);
    std::vector<Candidate> kept;
    std::vector<std::optional<LlmCall>> kept_calls;
    std::map<std::string, size_t> batch;  // normalized hash -> index in kept
    for (size_t i = 0; i < children.size(); ++i) {
        const std::string key = normalized_hash(children[i].source, children[i].tunables);
        int64_t original = 0;
        if (auto it = s.by_normalized.find(key); it != s.by_normalized.end())
            original = it->second;
        if (!original && !batch.count(key)) {
            batch[key] = kept.size();
            kept.push_back(std::move(children[i]));
            kept_calls.push_back(std::move(calls[i]));
            continue;
        }
        ++s.progress.duplicates;
        if (dropped)
            (*dropped)[i] = true;
        nlohmann::json payload = {{"parent", parent},
                                  {"mutator", to_string(children[i].mutator)},
                                  {"label", children[i].label},
                                  {"source_hash", content_hash(children[i].source, children[i].tunables)}};
        if (original)
            payload["original"] = original;
        else
            payload["original_in_batch"] = batch[key];  // its id is known once the batch is stored
        s.store->addEvent(s.run_id, "duplicate", payload);
        if (calls[i]) {
            calls[i]->outcome = "duplicate";
            calls[i]->error = original ? "duplicate of candidate " + std::to_string(original)
                                       : "duplicate of another answer in the same batch";
            recordLlmCalls({*calls[i]}, 0);
        }
    }
    calls = std::move(kept_calls);
    return kept;
}

void Loop::recordGating(int64_t id, GatingDecision decision, const std::string& reason, nlohmann::json extra) {
    s.cands[id].decision = decision;
    extra["candidate"] = id;
    extra["decision"] = to_string(decision);
    extra["reason"] = reason;
    s.store->addEvent(s.run_id, "gating", extra);
    SearchEvent g;
    g.kind = SearchEvent::Kind::Gating;
    g.candidate_id = id;
    g.decision = decision;
    g.message = reason;
    emit(std::move(g));
}

// A selective batch measures at most measure_per_parent of the children its policy chose to measure: those most likely
// to beat the best (then the highest predicted speedup). The others are kept as trusted candidates, so that the
// strategy turns to other parents sooner and a later rescue can still measure them. Audits and children without a
// forecast are measured regardless: the audit share must stay a random sample, and a child without a forecast has
// nothing to rank it by.
void Loop::capMeasured(const std::vector<GatingInput>& inputs, std::vector<GatingOutcome>& outcomes) const {
    if (s.gating.kind != GatingKind::Selective)
        return;  // measure-all measures everything; top-k has its own k
    // 0 only in runs stored before the cap was stored with the run: the default then, 8.
    const size_t cap = static_cast<size_t>(cfg.measure_per_parent > 0 ? cfg.measure_per_parent : 8);
    std::vector<size_t> chosen;
    for (size_t i = 0; i < outcomes.size(); ++i)
        if (outcomes[i].decision == GatingDecision::Measure && inputs[i].forecast)
            chosen.push_back(i);
    if (chosen.size() <= cap)
        return;
    auto mean = [&](size_t i) { return inputs[i].forecast->expectedLogSpeedupOverReference(s.scheme); };
    std::stable_sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) {
        return outcomes[a].p_above_best != outcomes[b].p_above_best
                   ? outcomes[a].p_above_best > outcomes[b].p_above_best
                   : mean(a) > mean(b);
    });
    char buf[120];
    for (size_t r = cap; r < chosen.size(); ++r) {
        GatingOutcome& o = outcomes[chosen[r]];
        o.decision = GatingDecision::Trust;
        std::snprintf(buf, sizeof buf, "; waits: rank %zu of %zu to measure in this batch, which measures %zu", r + 1,
                      chosen.size(), cap);
        o.reason += buf;
    }
}

size_t Loop::roundedBatch(size_t chosen, size_t available) const {
    const size_t k = static_cast<size_t>(std::max(cfg.round, 1));
    if (k == 1 || chosen == 0)
        return chosen;
    const int64_t room = cfg.budgets.measurements - s.progress.measurements - s.inFlightCount();
    size_t target = (chosen + k - 1) / k * k;
    target = std::min(target, room > 0 ? static_cast<size_t>(room) : size_t{0});
    return target > available ? chosen : std::max(target, chosen);  // too few to fill it: as chosen
}

// A round of K measures K candidates at once on a pool of K workers, so a batch of fewer leaves workers idle. The
// candidates the gate passed over fill the batch up to a multiple of K: the same parent's children first, then the
// most likely to beat the best (then the highest predicted speedup). Only compiled candidates not measured yet
// count. What they cannot fill, candidates that earlier batches passed over fill (fillRoundFromWaiting); a batch
// that all of them together cannot fill stays as it is.
void Loop::topUpToRound(const std::vector<int64_t>& ids, const std::vector<GatingInput>& inputs,
                        std::vector<GatingOutcome>& outcomes, size_t waiting) const {
    if (cfg.round <= 1)
        return;
    std::set<int64_t> parents;
    size_t chosen = 0;
    std::vector<size_t> passed;
    for (size_t i = 0; i < ids.size(); ++i) {
        const Cand& c = s.cands.at(ids[i]);
        if (c.measurement)
            continue;
        if (is_measured(outcomes[i].decision)) {
            parents.insert(c.c.parent_id);
            ++chosen;
        } else if (c.compile_error.empty()) {
            passed.push_back(i);
        }
    }
    const size_t target = roundedBatch(chosen, chosen + passed.size() + waiting);
    if (target <= chosen)
        return;
    auto mean = [&](size_t i) {
        return inputs[i].forecast ? inputs[i].forecast->expectedLogSpeedupOverReference(s.scheme) : -1e300;
    };
    std::stable_sort(passed.begin(), passed.end(), [&](size_t a, size_t b) {
        const bool sa = parents.count(s.cands.at(ids[a]).c.parent_id) > 0;
        const bool sb = parents.count(s.cands.at(ids[b]).c.parent_id) > 0;
        if (sa != sb)
            return sa;
        return outcomes[a].p_above_best != outcomes[b].p_above_best
                   ? outcomes[a].p_above_best > outcomes[b].p_above_best
                   : mean(a) > mean(b);
    });
    char buf[120];
    for (size_t added = 1; added <= std::min(target - chosen, passed.size()); ++added) {
        const size_t i = passed[added - 1];
        GatingOutcome& o = outcomes[i];
        o.decision = GatingDecision::Measure;
        std::snprintf(buf, sizeof buf, "; measured to fill a round of %d (%zu of this batch's top-up)", cfg.round,
                      added);
        o.reason += buf;
    }
}

void Loop::forecastAndGate(const std::vector<int64_t>& ids, bool initial) { measureInOrder(gate(ids, initial)); }

std::vector<int64_t> Loop::gate(const std::vector<int64_t>& ids, bool initial) {
    if (ids.empty())
        return {};
    std::vector<ForecastQuery> queries;
    std::vector<int64_t> asked;
    std::vector<GatingInput> inputs(ids.size());
    std::set<int64_t> deferred;  // the surrogate asked for a measurement instead of forecasting
    if (s.surrogate && s.progress.forecasts < forecastBudget()) {
        for (int64_t id : ids) {
            try {
                queries.push_back(queryFor(s.cands.at(id)));
                asked.push_back(id);
            } catch (const Error& e) {
                s.store->addEvent(s.run_id, "forecast_failed", {{"candidate", id}, {"error", e.what()}});
            }
        }
        std::vector<ForecastResult> results = s.surrogate->forecast(queries);
        for (size_t i = 0; i < asked.size() && i < results.size(); ++i) {
            const int64_t id = asked[i];
            if (results[i].deferred)
                deferred.insert(id);
            if (const Forecast* f = recordForecast(id, results[i]))
                inputs[static_cast<size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin())].forecast = *f;
        }
    }
    // What earlier batches passed over, for a round this batch's own candidates cannot fill (SearchConfig::round).
    const std::vector<Waiting> waiting = !initial && cfg.round > 1 ? waitingOutside(ids) : std::vector<Waiting>{};
    std::vector<GatingOutcome> outcomes;
    if (initial) {
        outcomes.resize(ids.size());
        for (auto& o : outcomes) {
            o.decision = GatingDecision::Measure;
            o.reason = "initial population";
        }
    } else {
        outcomes = decide_gating(s.gating, inputs, s.scheme, s.progress.best_speedup, s.rng);
        capMeasured(inputs, outcomes);
        for (size_t i = 0; i < ids.size(); ++i)
            if (deferred.count(ids[i])) {
                outcomes[i].decision = GatingDecision::Measure;
                outcomes[i].reason = "the forecaster deferred to a measurement";
            } else if (auto picked = s.space_picked.find(ids[i]); picked != s.space_picked.end()) {
                outcomes[i].decision = GatingDecision::Measure;
                outcomes[i].reason = picked->second;
            }
        topUpToRound(ids, inputs, outcomes, waiting.size());
    }
    std::vector<size_t> order;
    for (size_t i = 0; i < ids.size(); ++i) {
        recordGating(ids[i], outcomes[i].decision, outcomes[i].reason,
                     {{"p_above_best", outcomes[i].p_above_best}, {"confidence", outcomes[i].confidence}});
        if (is_measured(outcomes[i].decision))
            order.push_back(i);
    }
    // The most promising first, so that a budget that runs out mid-batch spends itself well.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return outcomes[a].p_above_best > outcomes[b].p_above_best; });
    std::vector<int64_t> chosen;
    for (size_t i : order)
        chosen.push_back(ids[i]);
    for (int64_t id : fillRoundFromWaiting(chosen, waiting))
        chosen.push_back(id);
    return chosen;
}

std::vector<Loop::Waiting> Loop::waitingOutside(const std::vector<int64_t>& batch) const {
    const std::set<int64_t> in_batch(batch.begin(), batch.end());
    std::vector<Waiting> waiting;
    for (const auto& [id, c] : s.cands)
        if (!c.measurement && c.compile_error.empty() && c.decision && !is_measured(*c.decision) && c.forecast &&
            !in_batch.count(id))
            waiting.push_back({id,
                               s.progress.best_speedup > 0
                                   ? c.forecast->probabilityAboveReference(s.scheme, s.progress.best_speedup)
                                   : 1.0,
                               c.forecast->expectedLogSpeedupOverReference(s.scheme)});
    std::stable_sort(waiting.begin(), waiting.end(), [](const Waiting& a, const Waiting& b) {
        return a.p_above != b.p_above ? a.p_above > b.p_above : a.mean > b.mean;
    });
    return waiting;
}

std::vector<int64_t> Loop::fillRoundFromWaiting(const std::vector<int64_t>& chosen,
                                                const std::vector<Waiting>& waiting) {
    if (waiting.empty())
        return {};
    const size_t fresh = static_cast<size_t>(
        std::count_if(chosen.begin(), chosen.end(), [&](int64_t id) { return !s.cands.at(id).measurement; }));
    const size_t target = roundedBatch(fresh, fresh + waiting.size());
    if (target <= fresh)
        return {};
    std::vector<int64_t> added;
    char reason[200];
    for (size_t k = 0; k < target - fresh; ++k) {
        const Waiting& w = waiting[k];
        std::snprintf(reason, sizeof reason,
                      "measured to fill a round of %d (%zu of this batch's top-up, passed over by an earlier batch; "
                      "P = %.2f)",
                      cfg.round, k + 1, w.p_above);
        recordGating(w.id, GatingDecision::Measure, reason, {{"p_above_best", w.p_above}});
        added.push_back(w.id);
    }
    return added;
}

MeasureRequest Loop::requestFor(const Cand& c) const {
    MeasureRequest req;
    req.problem_dir = s.bundle.problem.dir;
    req.candidate.source = c.c.source;
    req.candidate.tunables = c.c.tunables;
    req.candidate.file_name = c.c.label.rfind("seed:", 0) == 0 ? c.c.label.substr(5) : "candidate.cu";
    req.reference.source = s.bundle.reference.source;
    req.reference.file_name = "reference.cu";
    return req;
}

void Loop::measure(int64_t id) {
    const Cand& c = s.cands.at(id);
    if (c.measurement)
        return;
    MeasureOutcome out;
    if (auto before = s.measured_before.find(c.c.source_hash);
        before != s.measured_before.end() && !before->second.empty()) {
        out.measurement = before->second.front();  // measured by the interrupted session after its checkpoint
        before->second.pop_front();
    } else {
        out = s.device->measure(requestFor(c));
    }
    applyMeasurement(id, out);
}

std::vector<int64_t> Loop::withinBudget(const std::vector<int64_t>& ids) const {
    std::vector<int64_t> todo;
    for (int64_t id : ids)
        if (!s.cands.at(id).measurement && std::find(todo.begin(), todo.end(), id) == todo.end() &&
            s.progress.measurements + s.inFlightCount() + static_cast<int64_t>(todo.size()) < cfg.budgets.measurements)
            todo.push_back(id);
    return todo;
}

void Loop::measureInOrder(const std::vector<int64_t>& ids) {
    const std::vector<int64_t> todo = withinBudget(ids);
    auto* pool = s.device->batchPool();
    // What an interrupted session measured after its checkpoint is taken from the store, in this order: one by one.
    if (!pool || todo.size() < 2 || measuredBefore(todo)) {
        for (int64_t id : todo)
            measure(id);
        if (pool)
            recordPoolNotes(*pool);
        return;
    }
    applyPoolBatch(*pool, submitTo(*pool, todo), todo);
}

bool Loop::measuredBefore(const std::vector<int64_t>& ids) const {
    return std::any_of(ids.begin(), ids.end(), [&](int64_t id) {
        auto it = s.measured_before.find(s.cands.at(id).c.source_hash);
        return it != s.measured_before.end() && !it->second.empty();
    });
}

MeasurementPool::Ticket Loop::submitTo(MeasurementPool& pool, const std::vector<int64_t>& ids) {
    std::vector<MeasurementPool::Job> jobs;
    for (int64_t id : ids)
        jobs.push_back({requestFor(s.cands.at(id)), id});
    return pool.submit(std::move(jobs));
}

void Loop::applyPoolBatch(MeasurementPool& pool, MeasurementPool::Ticket ticket, const std::vector<int64_t>& ids) {
    pool.collect(
        ticket,
        [&](size_t i, MeasureOutcome& out) {
        recordPoolNotes(pool);
        applyMeasurement(ids[i], out);
        },
        [&](const PoolSnapshot& snapshot) {
        SearchEvent e;
        e.kind = SearchEvent::Kind::Pool;
        e.pool = snapshot;
        emit(std::move(e));
    });
    recordPoolNotes(pool);
}

SearchRunner::State::InFlight Loop::dispatch(const std::vector<int64_t>& ids, int64_t parent) {
    SearchRunner::State::InFlight batch;
    batch.parent = parent;
    batch.ids = withinBudget(ids);
    // What an interrupted session measured after its checkpoint comes from the store when the batch is applied.
    if (auto* pool = s.device->batchPool(); pool && !batch.ids.empty() && !measuredBefore(batch.ids))
        batch.ticket = submitTo(*pool, batch.ids);
    return batch;
}

void Loop::finishInFlight() {
    if (!s.in_flight)
        return;
    SearchRunner::State::InFlight batch = std::move(*s.in_flight);
    s.in_flight.reset();
    const double best_before = s.progress.best_speedup;
    if (auto* pool = s.device->batchPool(); batch.ticket && pool)
        applyPoolBatch(*pool, *batch.ticket, batch.ids);
    else
        measureInOrder(batch.ids);
    if (batch.parent) {
        const bool improved = s.progress.best_speedup > best_before;
        s.strategy.noteExpanded(batch.parent, improved);
        s.store->addEvent(s.run_id, "expanded", {{"parent", batch.parent}, {"improved", improved}});
    }
}

// What the pool did (a worker lost and its candidate requeued, a worker retired) goes to the event log.
void Loop::recordPoolNotes(MeasurementPool& pool) {
    for (PoolNote& n : pool.takeNotes()) {
        s.store->addEvent(s.run_id, n.kind, n.payload);
        SearchEvent e;
        e.kind = SearchEvent::Kind::Pool;
        e.message = n.message;
        e.pool = pool.snapshot();
        emit(std::move(e));
    }
}

void Loop::applyMeasurement(int64_t id, MeasureOutcome& out) {
    Cand& c = s.cands.at(id);
    s.rows.measurement = s.store->addMeasurement(id, out.measurement);
    c.measurement = out.measurement;
    if (c.report.empty() && !out.static_report.empty()) {
        c.report = out.static_report;
        s.store->addStaticReports(id, c.report);  // a resumed run builds the same forecast queries from it
    }
    ++s.progress.measurements;
    noteMeasured(id, false);
}

void Loop::updateCalibration() {
    if (!s.scored.empty())
        s.progress.setCalibration(compute_metrics(s.scored, s.scheme));
    if (!s.scored_audited.empty())
        s.progress.setAuditedCalibration(compute_metrics(s.scored_audited, s.scheme));
}

// Book-keeping after a measurement (also when a resumed run replays its stored ones).
void Loop::noteMeasured(int64_t id, bool restoring) {
    Cand& c = s.cands.at(id);
    const Measurement& m = *c.measurement;
    const bool accepted = m.status == Status::Suspect && s.accepted_suspects.count(id);
    const bool ok = (m.status == Status::Ok || accepted) && m.speedup > 0 && std::isfinite(m.speedup);
    if (c.c.mutator == Mutator::Reference && m.candidate)
        s.reference_us = m.candidate->median_us;
    bool improved = false;
    if (ok) {
        improved = admit(id, m);
    } else {
        s.recent_failures.push_back(id);
    }
    if (m.device_kind != "compiler")
        s.trajectory.push_back({s.progress.measurements, s.progress.best_speedup});
    if (restoring)
        return;
    SearchEvent e;
    e.kind = SearchEvent::Kind::Measured;
    e.candidate_id = id;
    e.measurement = m;
    e.speedup = ok ? m.speedup : 0;
    emit(std::move(e));
    if (improved)
        noteNewBest(id, m.speedup);
}

// A correct measurement (or an accepted suspect one) enters the archive, the calibration and the surrogate's
// training. True when it is the run's new best.
bool Loop::admit(int64_t id, const Measurement& m) {
    Cand& c = s.cands.at(id);
    bool improved = false;
    s.strategy.addMeasured(id, c.c.parent_id, m.speedup, expandable(c.c));
    if (m.speedup > s.progress.best_speedup) {
        s.progress.best_speedup = m.speedup;
        s.progress.best_candidate = id;
        improved = true;
    }
    if (c.forecast) {
        ScoredForecast sf;
        sf.probabilities = c.forecast->probabilities;
        // The forecast was of S against its anchor: score it against the measured S.
        sf.true_speedup = m.speedup / c.forecast->anchor_speedup;
        sf.pack = s.bundle.problem.name;
        s.scored.push_back(sf);
        // The audit share is a random sample of the candidates the gate trusted: the calibration it gives is not
        // skewed towards the unsure and promising ones that the gate chose to measure.
        if (c.decision == GatingDecision::Audit)
            s.scored_audited.push_back(sf);
        updateCalibration();
    }
    if (s.surrogate) {
        try {
            s.surrogate->learn({LabelledExample{queryFor(c), m.speedup}});
        } catch (const Error&) {
            // a query that cannot be built teaches nothing; the measurement itself is stored
        }
    }
    return improved;
}

void Loop::noteNewBest(int64_t id, double speedup) {
    s.store->addEvent(s.run_id, "new_best", {{"candidate", id}, {"speedup", speedup}});
    SearchEvent b;
    b.kind = SearchEvent::Kind::NewBest;
    b.candidate_id = id;
    b.speedup = speedup;
    emit(std::move(b));
}

// A person's verdict on a suspect result, recorded as a "review" event; an accepted one enters the archive now.
void Loop::review(const SearchCommand& c) {
    try {
        const SuspectReview r = record_suspect_review(*s.store, s.run_id, c.candidate_id, c.accept);
        emitSimple(SearchEvent::Kind::Command, std::string("review: candidate ") + std::to_string(c.candidate_id) +
                                                   (r.accepted ? " accepted" : " rejected"));
        if (!r.accepted || s.accepted_suspects.count(c.candidate_id)) {
            if (!r.accepted && s.accepted_suspects.erase(c.candidate_id))
                emitSimple(SearchEvent::Kind::Command, "review: candidate " + std::to_string(c.candidate_id) +
                                                           " stays in the archive until the run is resumed");
            return;
        }
        s.accepted_suspects.insert(c.candidate_id);
        Cand& cand = s.cands.at(c.candidate_id);
        if (admit(c.candidate_id, *cand.measurement))
            noteNewBest(c.candidate_id, cand.measurement->speedup);
    } catch (const Error& e) {
        s.store->addEvent(s.run_id, "review", {{"candidate", c.candidate_id}, {"ignored", e.what()}});
        emitSimple(SearchEvent::Kind::Command, std::string("review ignored: ") + e.what());
    }
}

void Loop::startFresh() {
    s.bundle = load_problem_folder(cfg.problem_dir);
    requireRecording();
    RunInfo info;
    info.name = s.bundle.problem.name + " on " + s.device->id();
    info.problem = s.bundle.problem.name;
    info.device = s.device->id();
    info.surrogate = s.surrogate ? s.surrogate->id() : "none";
    info.gating = describe(cfg.gating);
    info.seed = static_cast<int64_t>(cfg.seed);
    if (cfg.measure_per_parent == 0)
        cfg.measure_per_parent = kMeasurePerParent;  // stored as a number, so the run keeps it if the default moves
    cfg.budgets = default_llm_budgets(cfg);          // stored as numbers too: a resumed run keeps them
    s.llm_ledger = LlmProposalLedger(cfg.llm_pacing);
    if (cfg.space_picks < 0) {
        // The same; by default only for a space that moves from a parent do not cover (kSpaceModelFrom).
        size_t configurations = 0;
        try {
            if (s.bundle.family && !s.bundle.family->tunables.empty())
                configurations = s.bundle.family->configurationCount(kSpaceModelFrom);
        } catch (const Error&) {
            configurations = kSpaceModelFrom;  // too many to count: large
        }
        cfg.space_picks =
            cfg.gating.kind != GatingKind::MeasureAll && configurations >= kSpaceModelFrom ? kSpacePicks : 0;
    }
    info.config = cfg;
    s.run_id = s.store->addRun(info);
    storeProblem();
    s.rng = SplitMix(cfg.seed);
    s.gating = cfg.gating;
    s.strategy = SearchStrategy(cfg.strategy);
    checkpoint();  // before the seeding: a run killed during it resumes from here
    emitSimple(SearchEvent::Kind::RunStarted, info.name);
    seedPopulation();
}

// A device that answers from recordings answers nothing for a problem it has no recording of (or of another
// definition of it): every measurement would be not_recorded while the budget is spent, so the search stops before
// the first one.
void Loop::requireRecording() const {
    const std::string folder = s.device->recordingsFolder();
    if (folder.empty())
        return;
    const std::string& name = s.bundle.problem.name;
    const auto rec = s.device->recording(name);
    const std::string todo = "; record it on a GPU (kerncast-cli record --problem " + cfg.problem_dir +
                             " --device cuda:0) or choose a device that has its recording";
    if (!rec)
        throw Error(SourceLocation{cfg.problem_dir, 0}, "problem '" + name + "' has no recording on " + s.device->id() +
                                                            " (no " + name + ".jsonl in " + folder +
                                                            "): the replay device could measure nothing" + todo);
    if (rec->header.problem_fingerprint != problem_fingerprint(cfg.problem_dir))
        throw Error(SourceLocation{cfg.problem_dir, 0},
                    "problem '" + name + "' is not the definition recorded on " + s.device->id() + " (" + rec->file +
                        " measured problem fingerprint '" + rec->header.problem_fingerprint +
                        "'; problem.json or the reference changed since): the replay device could measure nothing" +
                        todo);
}

// A device that answers from recordings cannot measure a program it has no recording of (a kernel edited by hand):
// asking would only spend a measurement on not_recorded. The candidate says why instead.
bool Loop::deviceCanMeasure(int64_t id) {
    if (s.device->recordingsFolder().empty())
        return true;
    const Cand& c = s.cands.at(id);
    const auto rec = s.device->recording(s.bundle.problem.name);
    if (rec && rec->find(content_hash(c.c.source, c.c.tunables)))
        return true;
    recordGating(id, GatingDecision::Discard,
                 "not measured: " + s.device->id() +
                     " answers only the programs recorded on a GPU, and this one is not among them (no measurement "
                     "was spent); measure it on a GPU");
    return false;
}

void Loop::storeProblem() {
    ProblemRecord pr;
    pr.name = s.bundle.problem.name;
    pr.dir = s.bundle.problem.dir;
    pr.json = try_parse_untrusted_json(s.bundle.problem.json_text).value_or(nlohmann::json::object());
    s.store->addProblem(pr);
}

void Loop::seedPopulation() {
    std::vector<Candidate> roots;
    Candidate ref;
    ref.mutator = Mutator::Reference;
    ref.label = "reference";
    ref.source = s.bundle.reference.source;
    roots.push_back(ref);
    for (const auto& seed : s.bundle.seeds) {
        Candidate c;
        c.mutator = Mutator::Seed;
        c.label = "seed:" + fs::path(seed.file).filename().string();
        c.source = seed.source;
        roots.push_back(c);
    }
    const bool screen = s.surrogate && cfg.gating.kind != GatingKind::MeasureAll && cfg.initial_screen > 1;
    const size_t family = static_cast<size_t>(std::max(0, cfg.initial_family));
    const size_t drawn = screen ? family * static_cast<size_t>(cfg.initial_screen) : family;
    // SearchConfig::round: the first batch (the reference, the seeds and, unscreened, the initial family
    // configurations) is filled up to a round with further random ones, drawn after those the search draws anyway.
    const size_t first = roots.size() + (screen ? 0 : family);
    const size_t fill = roundedBatch(first, std::numeric_limits<size_t>::max()) - first;
    std::vector<Candidate> configs = random_family_candidates(s.bundle, drawn + fill, s.rng);
    std::vector<Candidate> filling(configs.begin() + static_cast<std::ptrdiff_t>(std::min(drawn, configs.size())),
                                   configs.end());
    configs.resize(std::min(drawn, configs.size()));
    if (!screen) {
        for (auto& c : configs)
            roots.push_back(c);
        for (auto& c : filling)
            roots.push_back(c);
        forecastAndGate(addChildren(roots), true);
    } else {
        for (auto& c : filling)
            roots.push_back(c);
        forecastAndGate(addChildren(roots), true);
        screenInitial(addChildren(configs), family);
    }
    s.seeded = true;
    checkpoint();
}

// Resuming goes back to the last checkpoint: what the interrupted session wrote after it (part of an iteration, or
// of the seeding and the initial screen) is taken out of the file and done again, so that the run continues exactly
// as it would have without the interruption. Its measurements are kept aside and reused for the same programs, so
// that no program is measured twice. The state is rebuilt from the file in the order it was written: measurements
// in measurement order (the trajectory, the strategy and the surrogate's examples), every forecast counted.
void Loop::restore() {
    const auto runs = s.store->runs();
    const RunInfo& run = runs.back();
    s.run_id = run.id;
    const SearchBudgets given = cfg.budgets;
    cfg = search_config_from_json(run.config);
    for (const RunEvent& ev : s.store->events(s.run_id))
        if (ev.kind == "budgets_extended")
            cfg.budgets = search_budgets_from_json(ev.payload.value("budgets", nlohmann::json::object()));
    const SearchBudgets stored_budgets = cfg.budgets;
    cfg.budgets = extended_budgets(stored_budgets, given);
    s.bundle = load_problem_folder(cfg.problem_dir);
    s.gating = cfg.gating;
    s.strategy = SearchStrategy(cfg.strategy);
    s.rng = SplitMix(cfg.seed);

    // The last checkpoint that says which rows it covers; none: the run is redone from its start.
    int64_t last_event = 0;
    SearchRunner::State::Rows keep;
    for (const RunEvent& ev : s.store->events(s.run_id))
        if (ev.kind == "checkpoint" && ev.payload.contains("rows")) {
            last_event = ev.id;
            const auto& r = ev.payload["rows"];
            keep = {r.value("candidate", int64_t{0}), r.value("forecast", int64_t{0}),
                    r.value("measurement", int64_t{0})};
        }
    std::map<int64_t, std::string> hash_of;
    for (const Candidate& c : s.store->candidates(s.run_id))
        hash_of[c.id] = c.source_hash;
    for (const auto& [id, ms] : s.store->measurementsOfRun(s.run_id))
        for (const StoredMeasurement& m : ms)
            if (m.id > keep.measurement && m.measurement.device_kind != "compiler")
                s.measured_before[hash_of[id]].push_back(m.measurement);
    s.store->rollBackRun(s.run_id, keep.candidate, keep.forecast, keep.measurement, last_event,
                         {"secrets_stripped", "budgets_extended", "resumed", "review"});
    s.rows = keep;

    std::map<int64_t, GatingDecision> decisions;
    nlohmann::json surrogate_state;
    nlohmann::json in_flight;  // an overlapped search's batch queued at the checkpoint
    nlohmann::json llm_state;  // LLM proposals earned and spent, the largest iteration's spend
    for (const RunEvent& ev : s.store->events(s.run_id)) {
        const auto& p = ev.payload;
        if (ev.kind == "gating")
            decisions[p.value("candidate", int64_t{0})] =
                gating_decision_from_string(p.value("decision", std::string("measure")));
        else if (ev.kind == "checkpoint") {
            s.rng.setState(std::stoull(p.value("rng", std::string("0"))));
            s.iteration = p.value("iteration", int64_t{0});
            s.elapsed_before = p.value("elapsed_s", 0.0);
            s.seeded = p.value("seeded", true);
            surrogate_state = p.value("surrogate", nlohmann::json());
            in_flight = p.value("in_flight", nlohmann::json());
            llm_state = p.value("llm", nlohmann::json());
        } else if (ev.kind == "forecast_failed" && p.value("asked", false))
            ++s.progress.forecasts;
        else if (ev.kind == "gating_changed")
            s.gating = gating_config_from_json(p.value("gating", nlohmann::json::object()));
    }
    if (!last_event)
        s.seeded = false;

    auto reports = s.store->staticReportsOfRun(s.run_id);
    auto forecasts = s.store->forecastsOfRun(s.run_id);
    for (Candidate& c : s.store->candidates(s.run_id)) {
        Cand cand;
        cand.c = c;
        cand.report = std::move(reports[c.id]);
        // Every forecast counts, re-forecasts included; the last one is the candidate's.
        for (const StoredForecast& f : forecasts[c.id]) {
            ++s.progress.forecasts;
            s.progress.tokens += f.forecast.tokens_in + f.forecast.tokens_out;
            s.progress.cost_usd += f.forecast.cost_usd;
            cand.forecast = f.forecast;
        }
        if (auto d = decisions.find(c.id); d != decisions.end())
            cand.decision = d->second;
        s.seen.insert(c.source_hash);
        s.by_normalized.emplace(normalized_hash(c.source, c.tunables), c.id);
        if (c.mutator == Mutator::Reference)
            s.reference_report = cand.report;
        ++s.progress.candidates;
        s.cands[c.id] = std::move(cand);
    }
    s.accepted_suspects = accepted_suspects(s.store->events(s.run_id));
    std::vector<StoredMeasurement> measured;
    for (auto& [id, ms] : s.store->measurementsOfRun(s.run_id))
        measured.insert(measured.end(), ms.begin(), ms.end());
    std::sort(measured.begin(), measured.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (const StoredMeasurement& m : measured) {
        Cand& cand = s.cands.at(m.candidate_id);
        cand.measurement = m.measurement;
        if (m.measurement.status == Status::CompileError)
            cand.compile_error = m.measurement.reason;
        if (m.measurement.device_kind != "compiler")
            ++s.progress.measurements;
        noteMeasured(m.candidate_id, true);
    }
    // The strategy's visits and marks, once every measured parent is known to it again.
    for (const RunEvent& ev : s.store->events(s.run_id)) {
        const auto& p = ev.payload;
        if (ev.kind == "expanded")
            s.strategy.noteExpanded(p.value("parent", int64_t{0}), p.value("improved", false));
        else if (ev.kind == "exhausted")
            s.strategy.markExhausted(p.value("parent", int64_t{0}));
        else if (ev.kind == "pin_parent")
            s.strategy.pin(p.value("candidate", int64_t{0}));
        else if (ev.kind == "unpin_parent")
            s.strategy.unpin();
        else if (ev.kind == "ban_parent")
            s.strategy.ban(p.value("candidate", int64_t{0}));
        else if (ev.kind == "unban_parent")
            s.strategy.unban(p.value("candidate", int64_t{0}));
        else if (ev.kind == "llm_request_shape" && s.shapes)
            s.shapes->remember(p.value("endpoint", std::string()), p.value("model", std::string()),
                               p.value("shape", nlohmann::json::object()).get<RequestShape>());
        else if (ev.kind == "duplicate")
            ++s.progress.duplicates;
    }
    if (s.surrogate && !surrogate_state.is_null())
        s.surrogate->restoreState(surrogate_state);
    s.llm_ledger = LlmProposalLedger(cfg.llm_pacing);
    if (llm_state.is_object()) {
        s.llm_ledger.restore(llm_state.value("ledger", nlohmann::json::object()));
        s.llm_step_max = {llm_state.value("step_tokens", int64_t{0}), llm_state.value("step_cost_usd", 0.0)};
    }

    std::vector<int64_t> pending;  // chosen for a measurement when the budget ran out: a larger budget measures them
    for (const auto& [id, c] : s.cands)
        if (!c.measurement && c.decision && is_measured(*c.decision))
            pending.push_back(id);
    // The batch an overlapped search had in flight is queued again (as the interrupted session had it), to be
    // applied by the next iteration; it is not measured ahead of it.
    std::vector<int64_t> in_flight_ids;
    if (in_flight.is_object())
        for (const auto& id : in_flight.value("candidates", nlohmann::json::array()))
            if (id.is_number_integer() && std::find(pending.begin(), pending.end(), id.get<int64_t>()) != pending.end())
                in_flight_ids.push_back(id.get<int64_t>());
    if (in_flight.is_object()) {
        std::vector<int64_t> rest;
        for (int64_t id : pending)
            if (std::find(in_flight_ids.begin(), in_flight_ids.end(), id) == in_flight_ids.end())
                rest.push_back(id);
        pending = std::move(rest);
    }
    restoreLlmAccounting();
    s.store->addEvent(s.run_id, "resumed",
                      {{"measurements", s.progress.measurements},
                       {"candidates", s.progress.candidates},
                       {"redone_measurements", s.measured_before.size()},
                       {"pending", pending.size()},
                       {"seeded", s.seeded}});
    if (nlohmann::json(cfg.budgets) != nlohmann::json(stored_budgets))
        s.store->addEvent(s.run_id, "budgets_extended", {{"budgets", cfg.budgets}});
    emitSimple(SearchEvent::Kind::RunStarted, "resumed " + run.name);
    if (!s.seeded) {
        storeProblem();
        checkpoint();
        seedPopulation();
        return;
    }
    measureInOrder(pending);
    if (in_flight.is_object())
        s.in_flight = dispatch(in_flight_ids, in_flight.value("parent", int64_t{0}));
    checkpoint();
}

// A search ends within its token and cost budgets: once what is left is less than the largest iteration so far
// spent, it stops before the next one rather than after it.
bool Loop::nextStepFits(std::string& why) const {
    // The reason is the one of a spent budget; the event says what was left.
    if (cfg.budgets.tokens > 0 && s.llm_step_max.tokens > 0 &&
        s.progress.tokens + s.llm_step_max.tokens > cfg.budgets.tokens) {
        s.store->addEvent(s.run_id, "budget_ends_before_step",
                          {{"tokens", s.progress.tokens},
                           {"budget_tokens", cfg.budgets.tokens},
                           {"step_tokens", s.llm_step_max.tokens}});
        why = "token budget spent";
        return false;
    }
    if (cfg.budgets.cost_usd > 0 && s.llm_step_max.cost_usd > 0 &&
        s.progress.cost_usd + s.llm_step_max.cost_usd > cfg.budgets.cost_usd) {
        s.store->addEvent(s.run_id, "budget_ends_before_step",
                          {{"cost_usd", s.progress.cost_usd},
                           {"budget_cost_usd", cfg.budgets.cost_usd},
                           {"step_cost_usd", s.llm_step_max.cost_usd}});
        why = "cost budget spent";
        return false;
    }
    return true;
}

// LlmPacing: the best measured parents get LLM proposals, as many as measurements have earned (never so many that the
// parent's duplicate streak could pass its limit), within what the token and cost budgets leave for calls as large as
// the largest so far. A parent only an LLM can expand, whose proposals are not earned yet, waits: a candidate that
// gating trusted is measured instead (rescue), or, with none waiting, the parent gets one proposal.
int Loop::llmShare(int64_t parent, bool only_llm) {
    const LlmPacing& pace = cfg.llm_pacing;
    if (s.llm_ledger.retired(parent))
        return 0;
    if (pace.elite_parents > 0) {
        const auto elites = s.strategy.elites(static_cast<size_t>(pace.elite_parents));
        if (std::find(elites.begin(), elites.end(), parent) == elites.end())
            return 0;
    }
    int64_t n = s.llm_ledger.allowance(parent, s.progress.measurements);
    if (n == 0 && only_llm) {
        if (rescue())
            return -1;
        n = 1;
    }
    const int64_t call_tokens =
        s.llm_call_max.tokens > 0
            ? s.llm_call_max.tokens
            : int64_t{2000} + (cfg.llm.is_object() ? cfg.llm.value("max_prompt_tokens", int64_t{6000}) : 6000);
    if (cfg.budgets.tokens > 0)
        n = std::min(n, std::max<int64_t>(cfg.budgets.tokens - s.progress.tokens, 0) / call_tokens);
    if (cfg.budgets.cost_usd > 0 && s.llm_call_max.cost_usd > 0)
        n = std::min(n, static_cast<int64_t>(std::max(cfg.budgets.cost_usd - s.progress.cost_usd, 0.0) /
                                             s.llm_call_max.cost_usd));
    return static_cast<int>(std::max<int64_t>(n, 0));
}

bool Loop::budgetLeft(std::string& why) const {
    if (!measurementsLeft()) {
        why = "measurement budget spent (" + std::to_string(cfg.budgets.measurements) + ")";
        return false;
    }
    if (s.surrogate && s.progress.forecasts >= forecastBudget()) {
        why = "forecast budget spent (" + std::to_string(forecastBudget()) + ")";
        return false;
    }
    if (cfg.budgets.tokens > 0 && s.progress.tokens >= cfg.budgets.tokens) {
        why = "token budget spent";
        return false;
    }
    if (cfg.budgets.cost_usd > 0 && s.progress.cost_usd >= cfg.budgets.cost_usd) {
        why = "cost budget spent";
        return false;
    }
    if (!nextStepFits(why))
        return false;
    if (cfg.budgets.wall_s > 0 && s.elapsed_before + seconds_since(s.started) >= cfg.budgets.wall_s) {
        why = "wall-time budget spent";
        return false;
    }
    return true;
}

// A consistent state of the search: what a resumed run goes back to (restore()). The rows written so far, the
// random state, the seeding stage and the surrogate's training point are enough to continue exactly as the search
// would have without the interruption.
void Loop::checkpoint() {
    nlohmann::json payload = {
        {"rng", std::to_string(s.rng.state())},
        {"iteration", s.iteration},
        {"elapsed_s", s.elapsed_before + seconds_since(s.started)},
        {"rows", {{"candidate", s.rows.candidate}, {"forecast", s.rows.forecast}, {"measurement", s.rows.measurement}}},
        {"seeded", s.seeded}};
    if (s.in_flight)
        payload["in_flight"] = {{"parent", s.in_flight->parent}, {"candidates", s.in_flight->ids}};
    if (search_uses_llm(cfg))
        payload["llm"] = {
            {"ledger", s.llm_ledger.state()},
            {"step_tokens", std::max(s.llm_step_max.tokens, s.progress.tokens - s.llm_step_start.tokens)},
            {"step_cost_usd", std::max(s.llm_step_max.cost_usd, s.progress.cost_usd - s.llm_step_start.cost_usd)}};
    if (s.surrogate)
        if (nlohmann::json state = s.surrogate->checkpointState(); !state.is_null())
            payload["surrogate"] = std::move(state);
    s.store->addEvent(s.run_id, "checkpoint", payload);
}

void Loop::iterate() {
    ++s.iteration;
    refreshSpaceModel();
    const std::optional<int64_t> parent = s.strategy.selectParent(s.rng);
    if (!parent && s.in_flight) {
        // The batch in flight may give new parents: apply it before rescuing or ending.
        finishInFlight();
        checkpoint();
        emitSimple(SearchEvent::Kind::Progress);
        return;
    }
    if (!parent) {
        if (!rescue()) {
            s.end_reason = "search space exhausted: no parent left to expand";
            s.stop_requested = true;
            return;
        }
        emitSimple(SearchEvent::Kind::Progress);
        return;
    }
    const double best_before = s.progress.best_speedup;
    MutationContext ctx;
    ctx.problem = &s.bundle;
    ctx.parent = exampleOf(*parent);
    ctx.seen = &s.seen;
    ctx.generation = s.cands.at(*parent).c.generation + 1;
    for (int64_t id : s.strategy.elites(static_cast<size_t>(cfg.inspirations) + 1))
        if (id != *parent)
            ctx.inspirations.push_back(exampleOf(id));
    for (size_t i = s.recent_failures.size() > 2 ? s.recent_failures.size() - 2 : 0; i < s.recent_failures.size(); ++i)
        ctx.inspirations.push_back(exampleOf(s.recent_failures[i]));

    std::vector<Candidate> children;
    std::vector<std::optional<LlmCall>> child_calls;
    std::vector<CandidateMutator*> able;
    for (auto& mu : s.mutators)
        if (mu->canExpand(ctx.parent.candidate, s.bundle))
            able.push_back(mu.get());
    const int batch = cfg.batch > 0 ? cfg.batch : (s.gating.kind == GatingKind::MeasureAll ? 8 : 24);
    const auto is_llm = [](const CandidateMutator* mu) {
        return mu->kind() == Mutator::LlmRewrite || mu->kind() == Mutator::LlmDiff;
    };
    const size_t llm_able = static_cast<size_t>(std::count_if(able.begin(), able.end(), is_llm));
    // The LLM mutators share what the pacing allows; the other mutators share the rest of the batch.
    const int llm_total = llm_able ? llmShare(*parent, llm_able == able.size()) : 0;
    if (llm_total < 0) {
        emitSimple(SearchEvent::Kind::Progress);
        return;
    }
    const int other_total = llm_able == able.size() ? 0 : std::max(batch - std::min(llm_total, batch / 2), 1);
    ctx.asked_before = s.llm_ledger.asked(*parent);
    ctx.duplicate_streak = s.llm_ledger.streak(*parent);
    std::vector<int> llm_proposal;  // per LLM proposal in order: its index in children, or -1 (no child)
    size_t llm_k = 0, other_k = 0;
    for (CandidateMutator* mu : able) {
        const bool llm = is_llm(mu);
        const size_t group = llm ? llm_able : able.size() - llm_able;
        const int total = llm ? llm_total : other_total;
        const size_t k = llm ? llm_k++ : other_k++;
        const int share = total / static_cast<int>(group) + (static_cast<int>(k) < total % static_cast<int>(group));
        if (share <= 0)
            continue;
        for (Proposal& p : mu->propose(ctx, share, s.rng)) {
            if (llm)
                llm_proposal.push_back(p.child ? static_cast<int>(children.size()) : -1);
            if (!p.call) {
                s.progress.tokens += p.tokens_in + p.tokens_out;
                s.progress.cost_usd += p.cost_usd;
            }
            if (p.child) {
                p.child->parent_id = *parent;
                p.child->generation = ctx.generation;
                children.push_back(*p.child);
                child_calls.push_back(p.call);
            } else {
                if (p.call)
                    recordLlmCalls({*p.call}, 0);
                s.store->addEvent(s.run_id, "mutation_failed",
                                  {{"parent", *parent},
                                   {"mutator", to_string(mu->kind())},
                                   {"error", p.failure},
                                   {"reply", p.raw_reply.substr(0, 4000)}});
            }
        }
    }
    std::map<std::string, std::string> pick_reasons;  // source hash -> why the space model chose it
    for (auto& [pick, reason] : spacePicks()) {
        pick_reasons[pick.source_hash] = reason;
        children.push_back(std::move(pick));
        child_calls.emplace_back();
    }
    std::vector<bool> dropped;
    children = dropDuplicates(std::move(children), child_calls, *parent, &dropped);
    for (int at : llm_proposal)
        s.llm_ledger.note(*parent, at < 0                             ? LlmProposalLedger::Answer::NoProgram
                                   : dropped[static_cast<size_t>(at)] ? LlmProposalLedger::Answer::Duplicate
                                                                      : LlmProposalLedger::Answer::NewProgram);
    if (children.empty()) {
        s.strategy.markExhausted(*parent);
        s.store->addEvent(s.run_id, "exhausted", {{"parent", *parent}});
        checkpoint();
        return;
    }
    const std::vector<int64_t> ids = addChildren(children);
    s.space_picked.clear();
    for (int64_t id : ids)
        if (auto it = pick_reasons.find(s.cands.at(id).c.source_hash); it != pick_reasons.end())
            s.space_picked[id] = it->second;
    for (size_t i = 0; i < s.last_added.size() && i < child_calls.size(); ++i)
        if (child_calls[i])
            recordLlmCalls({*child_calls[i]}, s.last_added[i]);
    if (cfg.overlap) {
        // Queued behind the batch in flight, so the workers go on with it while that one is applied.
        SearchRunner::State::InFlight next = dispatch(gate(ids, false), *parent);
        finishInFlight();
        s.in_flight = std::move(next);
        checkpoint();
        emitSimple(SearchEvent::Kind::Progress);
        return;
    }
    forecastAndGate(ids, false);
    const bool improved = s.progress.best_speedup > best_before;
    s.strategy.noteExpanded(*parent, improved);
    s.store->addEvent(s.run_id, "expanded", {{"parent", *parent}, {"improved", improved}});
    checkpoint();
    emitSimple(SearchEvent::Kind::Progress);
}

void Loop::refreshSpaceModel() {
    s.space_fit.reset();
    if (cfg.space_picks <= 0 || !s.bundle.family || s.bundle.family->tunables.empty())
        return;
    const KernelProgram& family = *s.bundle.family;
    SearchRunner::State::SpaceFit fit;
    // What the run knows of the space: every configuration it holds (measured or not: none is chosen twice) and the
    // measured ones' log speedups (NaN: it failed), with the forecast each had.
    std::vector<double> log_speedups;
    std::vector<const Cand*> of;
    for (const auto& [id, c] : s.cands) {
        if (c.c.source != family.source)
            continue;
        fit.known.insert(c.c.tunables);
        const bool failed = !c.compile_error.empty() || (c.measurement && c.measurement->status != Status::Ok &&
                                                         c.measurement->status != Status::NotRecorded);
        if (failed || (c.measurement && c.measurement->status == Status::Ok && c.measurement->speedup > 0)) {
            fit.measured.push_back(c.c.tunables);
            log_speedups.push_back(failed ? std::numeric_limits<double>::quiet_NaN()
                                          : std::log(c.measurement->speedup));
            of.push_back(&c);
        }
    }
    if (fit.measured.size() < kSpaceModelAfter)
        return;
    std::vector<std::string> names;
    for (const Tunable& t : family.tunables)
        names.push_back(t.name);
    SpaceModelOptions options;
    options.seed = cfg.seed;
    fit.model = std::make_shared<SpaceModel>(names, options);
    fit.model->fit(fit.measured, log_speedups);
    if (!fit.model->fitted())
        return;
    // Out of fold (kSpaceFolds folds by position): each measured configuration predicted by a model that did not
    // learn it; the spread's scale makes those errors standard normal, and the share of the space model in a forecast
    // is the one that would have scored best (Brier plus ranked probability score) on the forecasts the run made.
    constexpr size_t kSpaceFolds = 4;
    std::vector<std::optional<SpaceModel::Prediction>> oof(fit.measured.size());
    for (size_t fold = 0; fold < kSpaceFolds; ++fold) {
        std::vector<Configuration> train, held;
        std::vector<double> y;
        std::vector<size_t> at;
        for (size_t i = 0; i < fit.measured.size(); ++i)
            if (i % kSpaceFolds == fold) {
                held.push_back(fit.measured[i]);
                at.push_back(i);
            } else {
                train.push_back(fit.measured[i]);
                y.push_back(log_speedups[i]);
            }
        SpaceModel m(names, options);
        m.fit(train, y);
        if (!m.fitted() || held.empty())
            continue;
        const auto predicted = m.predict(held);
        for (size_t k = 0; k < at.size(); ++k)
            oof[at[k]] = predicted[k];
    }
    double z2 = 0;
    size_t nz = 0;
    for (size_t i = 0; i < oof.size(); ++i)
        if (oof[i] && std::isfinite(log_speedups[i])) {
            const double z = (log_speedups[i] - oof[i]->mean) / oof[i]->sigma;
            z2 += z * z;
            ++nz;
        }
    fit.sigma_scale = nz ? std::clamp(std::sqrt(z2 / static_cast<double>(nz)), 0.5, 10.0) : 1.0;
    constexpr int kWeights = 11;  // shares 0, 0.1, ..., 1
    std::array<double, kWeights> loss{};
    for (size_t i = 0; i < oof.size(); ++i) {
        const Cand& c = *of[i];
        // The forecast as stored (with the share of its time mixed in): what a resumed run reads back too.
        const std::optional<Forecast>& said = c.forecast;
        if (!oof[i] || !std::isfinite(log_speedups[i]) || !said)
            continue;
        const int truth = s.scheme.binOf(c.measurement->speedup / said->anchor_speedup);
        const auto space = space_bin_probabilities(s.scheme, oof[i]->mean - std::log(said->anchor_speedup),
                                                   oof[i]->sigma * fit.sigma_scale);
        for (int w = 0; w < kWeights; ++w) {
            std::array<double, kBinCount> p{};
            for (size_t b = 0; b < kBinCount; ++b)
                p[b] = (1 - w / 10.0) * said->probabilities[b] + w / 10.0 * space[b];
            loss[static_cast<size_t>(w)] += brier_score(p, truth) + ranked_probability_score(p, truth);
        }
        ++fit.scored;
    }
    if (fit.scored >= kSpaceModelAfter)
        fit.weight = static_cast<double>(std::min_element(loss.begin(), loss.end()) - loss.begin()) / 10.0;
    s.space_fit = std::move(fit);
}

void Loop::mixSpaceForecast(Forecast& f, const Candidate& c) const {
    if (!s.space_fit || s.space_fit->weight <= 0 || !s.bundle.family || c.source != s.bundle.family->source)
        return;
    const SearchRunner::State::SpaceFit& fit = *s.space_fit;
    const SpaceModel::Prediction p = fit.model->predict({c.tunables}).front();
    const double mean = p.mean - std::log(f.anchor_speedup), sigma = p.sigma * fit.sigma_scale, w = fit.weight;
    const auto space = space_bin_probabilities(s.scheme, mean, sigma);
    std::array<double, kBinCount> mixed{};
    for (size_t b = 0; b < kBinCount; ++b)
        mixed[b] = (1 - w) * f.probabilities[b] + w * space[b];
    // Only the distribution changes: everything else (the anchor, the surrogate's id, tokens, cost) stays f's.
    const Forecast binned = Forecast::fromRaw(mixed);
    Forecast out = f;
    out.probabilities = binned.probabilities;
    out.raw_sum = binned.raw_sum;
    out.predicted_bin = binned.predicted_bin;
    if (f.log_mean && f.log_sigma) {
        // The mixture's mean and spread (what gating compares with the best).
        const double m = (1 - w) * *f.log_mean + w * mean;
        const double second =
            (1 - w) * (*f.log_sigma * *f.log_sigma + *f.log_mean * *f.log_mean) + w * (sigma * sigma + mean * mean);
        out.log_mean = m;
        out.log_sigma = std::sqrt(std::max(second - m * m, 1e-12));
    }
    char note[200];
    std::snprintf(note, sizeof note,
                  "%sMixed with the space model (share %.0f%%, fitted out of fold on %zu measured configurations of "
                  "the run): %.2fx +- %.0f%% against the anchor.",
                  f.reasoning.empty() ? "" : " ", 100 * w, fit.scored, std::exp(mean), 100 * (std::exp(sigma) - 1));
    out.reasoning = f.reasoning + note;
    f = std::move(out);
}

std::vector<std::pair<Candidate, std::string>> Loop::spacePicks() {
    std::vector<std::pair<Candidate, std::string>> out;
    if (cfg.space_picks <= 0 || s.gating.kind == GatingKind::MeasureAll || !s.bundle.family ||
        s.bundle.family->tunables.empty() || !measurementsLeft())
        return out;
    const KernelProgram& family = *s.bundle.family;
    const std::optional<int64_t> best = s.strategy.best();
    if (!s.space_fit || !best || s.progress.best_speedup <= 0)
        return out;
    const SearchRunner::State::SpaceFit& fit = *s.space_fit;
    if (!s.space) {
        s.space.emplace();
        try {
            *s.space = family.configurations();
        } catch (const Error& e) {
            s.store->addEvent(s.run_id, "space_model", {{"error", e.what()}});
        }
    }
    std::vector<Configuration> pool;
    for (const Configuration& config : *s.space)
        if (!fit.known.count(config))
            pool.push_back(config);
    if (pool.empty())
        return out;
    const std::vector<Configuration>& measured = fit.measured;
    const SpaceModel& model = *fit.model;
    const std::vector<SpaceModel::Prediction> predicted = model.predict(pool);
    const double incumbent = std::log(s.progress.best_speedup);
    // The highest expected improvement first: where the model is unsure, or predicts better than the best.
    std::vector<double> ei(pool.size());
    for (size_t i = 0; i < pool.size(); ++i)
        ei[i] = expected_improvement(predicted[i].mean, predicted[i].sigma, incumbent);
    std::set<size_t> taken;
    for (int r = 0; r < cfg.space_picks; ++r) {
        std::optional<size_t> pick;
        for (size_t i = 0; i < pool.size(); ++i)
            if (!taken.count(i) && (!pick || ei[i] > ei[*pick]))
                pick = i;
        if (!pick)
            break;
        taken.insert(*pick);
        const SpaceModel::Prediction& p = predicted[*pick];
        Candidate c = family_candidate(s.bundle, pool[*pick]);
        c.parent_id = *best;
        c.generation = s.cands.at(*best).c.generation + 1;
        c.label += " (space model)";
        char reason[220];
        const double spread = 100 * (std::exp(p.sigma) - 1);
        std::snprintf(reason, sizeof reason,
                      "space model: expected improvement rank %d of %zu unmeasured configurations (predicted %.2fx, "
                      "spread %.0f%%, from %zu measured)",
                      r + 1, pool.size(), std::exp(p.mean), spread, measured.size());
        out.push_back({std::move(c), reason});
    }
    return out;
}

// The initial family configurations of a gated search: many random ones are forecast, the `keep` most promising
// (highest predicted speedup) are measured, the rest are screened out.
void Loop::screenInitial(const std::vector<int64_t>& ids, size_t keep) {
    if (ids.empty())
        return;
    std::vector<ForecastQuery> queries;
    std::vector<int64_t> asked;
    for (int64_t id : ids) {
        try {
            queries.push_back(queryFor(s.cands.at(id)));
            asked.push_back(id);
        } catch (const Error& e) {
            s.store->addEvent(s.run_id, "forecast_failed", {{"candidate", id}, {"error", e.what()}});
        }
    }
    const std::vector<ForecastResult> results = s.surrogate->forecast(queries);
    std::vector<std::pair<double, int64_t>> ranked;
    for (size_t i = 0; i < asked.size() && i < results.size(); ++i) {
        if (const Forecast* f = recordForecast(asked[i], results[i]))
            ranked.push_back({f->expectedLogSpeedupOverReference(s.scheme), asked[i]});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    keep = roundedBatch(std::min(keep, ranked.size()), ranked.size());  // SearchConfig::round
    std::vector<int64_t> chosen;
    for (size_t r = 0; r < ranked.size(); ++r) {
        const int64_t id = ranked[r].second;
        const bool measure_it = r < keep;
        char reason[160];
        std::snprintf(reason, sizeof reason,
                      "initial screening: rank %zu of %zu by predicted speedup (top %zu measured)", r + 1,
                      ranked.size(), keep);
        recordGating(id, measure_it ? GatingDecision::Measure : GatingDecision::Discard, reason);
        if (measure_it)
            chosen.push_back(id);
    }
    // An overlapped search measures the screen's choice while its first iteration chooses and queues a batch (from
    // the parents measured so far), like any batch in flight.
    if (cfg.overlap)
        s.in_flight = dispatch(chosen, 0);
    else
        measureInOrder(chosen);
}

// Every measured candidate has been expanded as far as the mutators go, but candidates that gating trusted without
// a measurement remain. A learning surrogate has learned since it first forecast them, so the most promising are
// forecast again (the new forecasts are stored like any other), and the one most likely to beat the best is
// measured: it can then become a parent.
constexpr size_t kRescueForecasts = 32;
bool Loop::rescue() {
    if (!measurementsLeft())
        return false;
    std::vector<int64_t> waiting;
    for (const auto& [id, c] : s.cands)
        if (!c.measurement && c.compile_error.empty() && c.decision && !is_measured(*c.decision))
            waiting.push_back(id);
    if (waiting.empty())
        return false;
    auto p_above = [&](int64_t id) {
        const Cand& c = s.cands.at(id);
        if (!c.forecast)
            return -1.0;
        return s.progress.best_speedup > 0 ? c.forecast->probabilityAboveReference(s.scheme, s.progress.best_speedup)
                                           : 1.0;
    };
    // A learning surrogate has changed since: the most promising few (by their last forecast) are forecast again.
    if (s.surrogate && s.surrogate->learns() && s.progress.forecasts < forecastBudget()) {
        std::vector<int64_t> again = waiting;
        std::stable_sort(again.begin(), again.end(), [&](int64_t a, int64_t b) { return p_above(a) > p_above(b); });
        if (again.size() > kRescueForecasts)
            again.resize(kRescueForecasts);
        std::vector<ForecastQuery> queries;
        std::vector<int64_t> asked;
        for (int64_t id : again) {
            try {
                queries.push_back(queryFor(s.cands.at(id)));
                asked.push_back(id);
            } catch (const Error&) {}
        }
        const std::vector<ForecastResult> results = s.surrogate->forecast(queries);
        for (size_t i = 0; i < asked.size() && i < results.size(); ++i)
            recordForecast(asked[i], results[i]);
    }
    int64_t pick = 0;
    double best_p = -1, best_mean = -1e300;
    for (int64_t id : waiting) {
        const Cand& c = s.cands.at(id);
        if (!c.forecast)
            continue;
        const double p = p_above(id);
        const double mean = c.forecast->expectedLogSpeedupOverReference(s.scheme);
        if (p > best_p || (p == best_p && mean > best_mean)) {
            best_p = p;
            best_mean = mean;
            pick = id;
        }
    }
    if (!pick)
        pick = waiting.front();
    char reason[200];
    std::snprintf(reason, sizeof reason,
                  "no parent left to expand: measuring the trusted candidate most likely to beat the best (P = %.2f, "
                  "of %zu waiting)",
                  std::max(best_p, 0.0), waiting.size());
    recordGating(pick, GatingDecision::Measure, reason, {{"p_above_best", best_p}});
    measure(pick);
    checkpoint();
    return true;
}

void Loop::applyCommand(const SearchCommand& c) {
    using K = SearchCommand::Kind;
    nlohmann::json payload = nlohmann::json::object();
    std::string message = to_string(c.kind);
    switch (c.kind) {
    case K::Pause:
        s.paused = true;
        s.progress.state = RunState::Paused;  // the command's event says so
        break;
    case K::Resume:
        s.paused = false;
        s.progress.state = RunState::Running;
        break;
    case K::Step:
        ++s.steps_allowed;
        break;
    case K::Stop:
        s.stop_requested = true;
        s.end_reason = "stopped by request";
        break;
    case K::Pin:
        s.strategy.pin(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::Unpin:
        s.strategy.unpin();
        break;
    case K::Ban:
        s.strategy.ban(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::Unban:
        s.strategy.unban(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::SetGating:
        s.gating = c.gating;
        payload["gating"] = c.gating;
        message += ": " + describe(c.gating);
        break;
    case K::SubmitKernel:
    case K::ForceMeasure:
    case K::Review:
        break;
    }
    if (c.kind == K::Review)
        return review(c);
    if (c.kind == K::SubmitKernel) {
        payload = {{"parent", c.candidate_id}, {"source_chars", c.source.size()}};
        s.store->addEvent(s.run_id, to_string(c.kind), payload);
        emitSimple(SearchEvent::Kind::Command, message);
        Candidate child;
        child.mutator = Mutator::Human;
        child.label = "submitted by hand";
        child.source = c.source;
        child.tunables = c.tunables;
        child.parent_id = s.cands.count(c.candidate_id) ? c.candidate_id : 0;
        child.generation = child.parent_id ? s.cands.at(child.parent_id).c.generation + 1 : 0;
        // A kernel a person wrote is forecast (for the record) and measured whatever the gate says of it: the gate
        // chooses among the search's own children, not for the person.
        const std::vector<int64_t> ids = addChildren({child});
        std::vector<int64_t> chosen = gate(ids, false);
        for (int64_t id : ids)
            if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) {
                recordGating(id, GatingDecision::Forced, "submitted by hand: measured whatever its forecast");
                chosen.push_back(id);
            }
        std::vector<int64_t> measurable;
        for (int64_t id : chosen)
            if (deviceCanMeasure(id))
                measurable.push_back(id);
        measureInOrder(measurable);
        return;
    }
    if (c.kind == K::ForceMeasure) {
        payload["candidate"] = c.candidate_id;
        auto it = s.cands.find(c.candidate_id);
        if (it == s.cands.end() || it->second.measurement) {
            payload["ignored"] = it == s.cands.end() ? "no such candidate in this run" : "already measured";
            s.store->addEvent(s.run_id, to_string(c.kind), payload);
            emitSimple(SearchEvent::Kind::Command, message + " ignored: " + payload["ignored"].get<std::string>());
            return;
        }
        s.store->addEvent(s.run_id, to_string(c.kind), payload);
        emitSimple(SearchEvent::Kind::Command, message);
        recordGating(c.candidate_id, GatingDecision::Forced, "forced by a person");
        if (measurementsLeft() && deviceCanMeasure(c.candidate_id))
            measure(c.candidate_id);
        return;
    }
    s.store->addEvent(s.run_id, to_string(c.kind), payload);
    emitSimple(SearchEvent::Kind::Command, message);
}

void Loop::applyCommands() {
    while (true) {
        std::deque<SearchCommand> batch;
        {
            std::unique_lock<std::mutex> lock(s.mutex);
            const bool waits = s.commands.empty() && s.paused && s.steps_allowed == 0 && !s.stop_requested;
            if (s.in_flight && (!s.commands.empty() || waits)) {
                // Commands and pauses come between batches: the one in flight is applied first.
                lock.unlock();
                finishInFlight();
                checkpoint();
                continue;
            }
            if (s.commands.empty()) {
                if (!s.paused || s.steps_allowed > 0 || s.stop_requested)
                    return;
                s.progress.state = RunState::Paused;
                const auto paused_at = std::chrono::steady_clock::now();
                s.cv.wait(lock, [&] { return !s.commands.empty(); });
                // Time spent paused is not search time: the elapsed time and the wall-time budget leave it out.
                s.started += std::chrono::steady_clock::now() - paused_at;
            }
            batch.swap(s.commands);
        }
        for (const auto& c : batch)
            applyCommand(c);
        checkpoint();  // so that a resumed run keeps the commands (it goes back to its last checkpoint)
        s.progress.state = s.paused ? RunState::Paused : RunState::Running;
    }
}

void Loop::run() {
    s.started = std::chrono::steady_clock::now();
    s.progress.budget_measurements = cfg.budgets.measurements;
    s.progress.state = RunState::Running;
    openStore();
    if (s.resume)
        restore();
    else
        startFresh();
    s.progress.budget_measurements = cfg.budgets.measurements;
    s.progress.budget_tokens = cfg.budgets.tokens;
    s.progress.budget_cost_usd = cfg.budgets.cost_usd;
    // Before its first iteration, an LLM surrogate's step is judged by its forecasts so far: a gated batch asks
    // for one per child.
    if (const LlmSpend& f = s.progress.llm_forecast; f.calls > 0) {
        const int batch = cfg.batch > 0 ? cfg.batch : (s.gating.kind == GatingKind::MeasureAll ? 8 : 24);
        s.llm_step_max.tokens = std::max(s.llm_step_max.tokens, f.tokens / f.calls * batch);
        s.llm_step_max.cost_usd = std::max(s.llm_step_max.cost_usd, f.cost_usd / double(f.calls) * batch);
    }
    while (true) {
        applyCommands();
        if (s.stop_requested)
            break;
        std::string why;
        if (!budgetLeft(why)) {
            s.end_reason = why;
            break;
        }
        if (s.paused && s.steps_allowed > 0)
            --s.steps_allowed;
        s.llm_step_start = {s.progress.tokens, s.progress.cost_usd};
        iterate();
        s.llm_step_max.tokens = std::max(s.llm_step_max.tokens, s.progress.tokens - s.llm_step_start.tokens);
        s.llm_step_max.cost_usd = std::max(s.llm_step_max.cost_usd, s.progress.cost_usd - s.llm_step_start.cost_usd);
        if (s.stop_requested)
            break;
    }
    if (s.in_flight) {
        finishInFlight();
        checkpoint();
    }
}

}  // namespace

SearchSummary SearchRunner::runHere() {
    State& s = *m;
    Loop loop(s, m_config);
    SearchSummary& out = s.summary;
    try {
        loop.run();
        s.progress.state = RunState::Finished;
        out.state = RunState::Finished;
        out.reason = s.end_reason;
    } catch (const std::exception& e) {
        s.progress.state = RunState::Failed;
        out.state = RunState::Failed;
        out.reason = e.what();
    }
    out.run_id = s.run_id;
    out.best_speedup = s.progress.best_speedup;
    out.best_candidate = s.progress.best_candidate;
    if (auto it = s.cands.find(out.best_candidate); it != s.cands.end())
        out.best_label = it->second.c.label;
    s.progress.elapsed_s = s.elapsed_before + seconds_since(s.started);
    out.progress = s.progress;
    out.trajectory = s.trajectory;
    out.calibration = s.scored.empty() ? nlohmann::json{{"n", 0}} : metrics_json(compute_metrics(s.scored, s.scheme));
    out.calibration_audited =
        s.scored_audited.empty() ? nlohmann::json{{"n", 0}} : metrics_json(compute_metrics(s.scored_audited, s.scheme));
    SearchEvent e;
    e.kind = out.state == RunState::Finished ? SearchEvent::Kind::Finished : SearchEvent::Kind::Failed;
    e.run_id = s.run_id;
    e.seq = ++s.seq;
    e.message = out.reason;
    e.progress = s.progress;
    try {
        if (s.store && s.run_id)
            s.store->addEvent(s.run_id, to_string(out.state),
                              {{"reason", out.reason},
                               {"best_speedup", out.best_speedup},
                               {"measurements", s.progress.measurements}});
    } catch (const std::exception& ex) {
        e.message += std::string(" (and the final event could not be stored: ") + ex.what() + ")";
    }
    if (s.callback)
        s.callback(e);
    return out;
}

}  // namespace kerncast
