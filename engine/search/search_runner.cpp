#include "engine/search/search_runner.h"

#include "core/error.h"
#include "engine/search/search_loop.h"

#include <algorithm>

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
         {"static_reports", c.static_reports},
         {"recalibrate", c.recalibrate},
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
    if (c.ahead != 0)
        j["ahead"] = c.ahead;
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
        c.static_reports = j.value("static_reports", std::string("all"));
        if (c.static_reports != "all" && c.static_reports != "measured" && c.static_reports != "auto")
            throw Error("search settings: 'static_reports' must be \"all\", \"measured\" or \"auto\", found \"" +
                        c.static_reports + "\"");
        c.recalibrate = j.value("recalibrate", false);  // a run stored before recalibration resumes without it
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
        c.ahead = j.value("ahead", c.ahead);
        if (c.ahead < 0)
            throw Error("search settings: 'ahead' must not be negative, got " + std::to_string(c.ahead));
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
    case K::Setup:
        return "setup";
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
        {"calibration_audited", s.calibration_audited},
        {"timeline", to_json(s.timeline)}};
}

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

std::shared_ptr<Timeline> SearchRunner::timeline() const { return m->timeline; }

void SearchRunner::setTimeline(std::shared_ptr<Timeline> timeline) {
    if (m_thread.joinable())
        throw Error("the timeline is set before the search starts");
    if (timeline)
        m->timeline = std::move(timeline);
}

void SearchRunner::setRecordedFamilyCheck(RecordedFamilyCheck check) {
    if (m_thread.joinable())
        throw Error("the recorded family is set before the search starts");
    m->family_check = std::move(check);
}

void SearchRunner::setRequestShapeMemory(std::shared_ptr<RequestShapeMemory> memory) { m->shapes = std::move(memory); }

SearchSummary SearchRunner::runHere() {
    State& s = *m;
    search_loop::Loop loop(s, m_config);
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
    s.progress.elapsed_s = s.elapsed_before + search_loop::seconds_since(s.started);
    out.progress = s.progress;
    out.trajectory = s.trajectory;
    out.calibration = s.scored.empty() ? nlohmann::json{{"n", 0}} : metrics_json(compute_metrics(s.scored, s.scheme));
    out.calibration_audited =
        s.scored_audited.empty() ? nlohmann::json{{"n", 0}} : metrics_json(compute_metrics(s.scored_audited, s.scheme));
    search_loop::note_compiles(s.compiler.get(), *s.timeline);
    out.timeline = s.timeline->summary();
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
