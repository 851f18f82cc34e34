// The search loop (ARCHITECTURE §3): a run from its store or a fresh start, the seeding and the initial screen, then
// iteration after iteration (parent, children, gating, measurement) until a budget or the space ends.

#include "engine/search/search_loop.h"

#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "core/untrusted_json.h"
#include "engine/replay/replay_device.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

namespace fs = std::filesystem;

namespace kerncast::search_loop {

namespace {

// A family configuration as the positions of its tunables' values in their lists, each scaled to [0, 1] (0 for a
// tunable of one value, or a value not in its list).
std::vector<double> list_positions(const std::vector<Tunable>& tunables, const std::map<std::string, int64_t>& config) {
    std::vector<double> x;
    x.reserve(tunables.size());
    for (const Tunable& t : tunables) {
        const auto at = config.find(t.name);
        const auto v = at == config.end() ? t.values.end() : std::find(t.values.begin(), t.values.end(), at->second);
        x.push_back(v == t.values.end() || t.values.size() < 2
                        ? 0.0
                        : static_cast<double>(v - t.values.begin()) / static_cast<double>(t.values.size() - 1));
    }
    return x;
}

// The greedy farthest-point order: points[0, chosen) are chosen already; `count` more, each the point farthest (mean
// absolute difference of coordinates) from every one chosen before it, with that distance (1 when nothing was chosen
// before). Ties go to the lower index.
std::vector<std::pair<size_t, double>> farthest_points(const std::vector<std::vector<double>>& points, size_t chosen,
                                                       size_t count) {
    std::vector<double> nearest(points.size(), std::numeric_limits<double>::infinity());
    std::vector<char> taken(points.size(), 0);
    const auto take = [&](size_t c) {
        taken[c] = 1;
        for (size_t r = 0; r < points.size(); ++r) {
            double d = 0;
            for (size_t k = 0; k < points[r].size(); ++k)
                d += std::abs(points[r][k] - points[c][k]);
            nearest[r] = std::min(nearest[r], d / static_cast<double>(std::max<size_t>(1, points[r].size())));
        }
    };
    for (size_t c = 0; c < chosen && c < points.size(); ++c)
        take(c);
    std::vector<std::pair<size_t, double>> out;
    while (out.size() < count) {
        std::optional<size_t> far;
        for (size_t r = 0; r < points.size(); ++r)
            if (!taken[r] && (!far || nearest[r] > nearest[*far]))
                far = r;
        if (!far)
            break;
        out.push_back({*far, std::isfinite(nearest[*far]) ? nearest[*far] : 1.0});
        take(*far);
    }
    return out;
}

}  // namespace

void Loop::run() {
    s.started = std::chrono::steady_clock::now();
    s.progress.budget_measurements = cfg.budgets.measurements;
    s.progress.state = RunState::Running;
    if (auto* pool = s.device->batchPool())
        pool->setTimeline(s.timeline);
    {
        const auto in_phase = phase(Phase::Setup);
        openStore();
        if (s.resume)
            restore();
        else
            startFresh();
    }
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
    if (!s.in_flight.empty()) {
        while (!s.in_flight.empty())
            finishInFlight();
        checkpoint();
    }
}

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
    if (cfg.overlap)
        cfg.ahead = cfg.aheadOrDefault();
    s.llm_ledger = LlmProposalLedger(cfg.llm_pacing);
    if (cfg.space_picks < 0 || cfg.static_reports == "auto") {
        // The same; by default only for a space that moves from a parent do not cover (kSpaceModelFrom).
        size_t configurations = 0;
        try {
            if (s.bundle.family && !s.bundle.family->tunables.empty())
                configurations = s.bundle.family->configurationCount(kSpaceModelFrom);
        } catch (const Error&) {
            configurations = kSpaceModelFrom;  // too many to count: large
        }
        const bool large = configurations >= kSpaceModelFrom;
        if (cfg.space_picks < 0)
            cfg.space_picks = cfg.gating.kind != GatingKind::MeasureAll && large ? kSpacePicks : 0;
        if (cfg.static_reports == "auto")
            cfg.static_reports = large ? "measured" : "all";
    }
    info.config = cfg;
    s.run_id = s.store->addRun(info);
    storeProblem();
    if (const size_t all = restrictFamilyToRecording())
        s.store->addEvent(s.run_id, "family_restricted",
                          {{"device", s.device->id()},
                           {"recorded", s.bundle.family->only->size()},
                           {"configurations", all},
                           {"why", "the device answers from a recording that holds only these configurations"}});
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

// A device that answers from recordings answers only the family configurations its recording holds. Where it holds
// some of them (a recording made with record --limit, or cut short), the search's family is restricted to those, so
// that no mutator, space-model pick or initial configuration is one the device could only answer not_recorded, each
// spending a measurement on nothing. The defaults that follow the family's size are taken before, from the whole
// family, as on a GPU. Returns the whole family's size when it restricted it, else 0.
size_t Loop::restrictFamilyToRecording() {
    if (!s.bundle.family)
        return 0;
    std::optional<PartialFamily> partial;
    if (s.family_check && s.family_check->family_source == s.bundle.family->source)
        partial = std::move(s.family_check->partial);
    else
        partial = partially_recorded_family(*s.device, s.bundle.problem.name, *s.bundle.family);
    s.family_check.reset();
    if (!partial)
        return 0;
    s.bundle.family->only = std::move(partial->recorded);
    return partial->configurations;
}

void Loop::storeProblem() {
    ProblemRecord pr;
    pr.name = s.bundle.problem.name;
    pr.dir = s.bundle.problem.dir;
    pr.json = try_parse_untrusted_json(s.bundle.problem.json_text).value_or(nlohmann::json::object());
    s.store->addProblem(pr);
}

std::vector<Candidate> root_candidates(const ProblemBundle& bundle) {
    std::vector<Candidate> roots;
    Candidate ref;
    ref.mutator = Mutator::Reference;
    ref.label = "reference";
    ref.source = bundle.reference.source;
    roots.push_back(ref);
    for (const auto& seed : bundle.seeds) {
        Candidate c;
        c.mutator = Mutator::Seed;
        c.label = "seed:" + fs::path(seed.file).filename().string();
        c.source = seed.source;
        roots.push_back(c);
    }
    return roots;
}

FirstDraw draw_first(const ProblemBundle& bundle, const SearchConfig& cfg, bool surrogate, int64_t room,
                     SplitMix& rng) {
    FirstDraw d;
    d.batch = root_candidates(bundle);
    d.screen = surrogate && cfg.gating.kind != GatingKind::MeasureAll && cfg.initial_screen > 1;
    d.family = static_cast<size_t>(std::max(0, cfg.initial_family));
    const size_t drawn = d.screen ? d.family * static_cast<size_t>(cfg.initial_screen) : d.family;
    // SearchConfig::round: the first batch (the reference, the seeds and, unscreened, the initial family
    // configurations) is filled up to a round with further random ones, drawn after those the search draws anyway.
    const size_t first = d.batch.size() + (d.screen ? 0 : d.family);
    const size_t fill = rounded_to_round(first, std::numeric_limits<size_t>::max(), cfg.round, room) - first;
    std::vector<Candidate> configs = random_family_candidates(bundle, drawn + fill, rng);
    const auto split = configs.begin() + static_cast<std::ptrdiff_t>(std::min(drawn, configs.size()));
    if (d.screen)
        d.screened.assign(configs.begin(), split);
    else
        d.batch.insert(d.batch.end(), configs.begin(), split);
    d.batch.insert(d.batch.end(), split, configs.end());
    return d;
}

void Loop::seedPopulation() {
    const FirstDraw d = draw_first(s.bundle, cfg, s.surrogate != nullptr, measurementsRoom(), s.rng);
    if (!d.screen) {
        forecastAndGate(addChildren(d.batch), true);
    } else {
        const std::vector<int64_t> root_ids = addChildren(d.batch);
        if (cfg.overlap) {
            // The screen's configurations are compiled (their static reports, or where those come with the
            // measurement in the compile pool's spare time) while the first batch is measured; they are forecast once
            // it is applied (the forecasts need the reference's time), as without overlap.
            s.in_flight.push_back(dispatch(gate(root_ids, true), 0));
            const std::vector<int64_t> config_ids = addChildren(d.screened);
            compileAhead(config_ids, /*spare=*/true);
            while (!s.in_flight.empty())
                finishInFlight();
            screenInitial(config_ids, d.family);
        } else {
            forecastAndGate(root_ids, true);
            screenInitial(addChildren(d.screened), d.family);
        }
    }
    s.seeded = true;
    checkpoint();
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
    const std::vector<ForecastResult> results = forecastWithinBudget(queries);
    for (size_t i = results.size(); i < asked.size(); ++i)
        recordGating(asked[i], GatingDecision::Discard,
                     "initial screening: not forecast, what is left of the LLM budget covers no further forecast");
    std::vector<std::pair<double, int64_t>> ranked;
    for (size_t i = 0; i < asked.size() && i < results.size(); ++i) {
        if (const Forecast* f = recordForecast(asked[i], results[i]))
            ranked.push_back({f->expectedLogSpeedupOverReference(s.scheme), asked[i]});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    keep = std::min(keep, ranked.size());
    // Where the space model will choose (SearchConfig::space_picks), kInitialSpread more of the screened
    // configurations are measured, each the farthest from those chosen before it: its first fit then sees the space,
    // not only the corner the surrogate (learned on other problems) prefers.
    const size_t spread = cfg.space_picks > 0 && s.bundle.family ? std::min(kInitialSpread, ranked.size() - keep) : 0;
    // An overlapped search measures at least SearchConfig::ahead of them (topped up by rank): they are what the
    // workers measure while its first iteration proposes, compiles and forecasts the first batch of its own, as every
    // later batch has that much queued behind it. With one round, 8 replay workers of the compiled model sat idle a
    // fifth of a softmax search of 64 measurements while the first iteration compiled its 24 children. Whole rounds,
    // and never more than half of what is left of the budget: the rest is the search's own.
    size_t least = 0;
    if (cfg.overlap) {
        const size_t k = static_cast<size_t>(std::max(cfg.round, 1));
        const size_t half = static_cast<size_t>(std::max<int64_t>(measurementsRoom(), 0)) / 2 / k * k;
        least = std::min({static_cast<size_t>(cfg.aheadOrDefault()), ranked.size(), half});
    }
    if (spread == 0)
        keep = roundedBatch(std::max(keep, least), ranked.size());  // SearchConfig::round: topped up by rank
    const size_t total = spread ? roundedBatch(std::max(keep + spread, least), ranked.size()) : keep;
    std::vector<char> measure(ranked.size(), 0);
    std::vector<double> apart(ranked.size(), -1);  // a spread pick's distance to the nearest chosen before it
    std::vector<size_t> order(ranked.size(), 0);   // and its place among the spread picks (1, 2, ...)
    for (size_t r = 0; r < keep; ++r)
        measure[r] = 1;
    if (total > keep) {
        std::vector<std::vector<double>> points;
        for (const auto& [_, id] : ranked)
            points.push_back(list_positions(s.bundle.family->tunables, s.cands.at(id).c.tunables));
        size_t n = 0;
        for (const auto& [r, distance] : farthest_points(points, keep, total - keep)) {
            measure[r] = 1;
            apart[r] = distance;
            order[r] = ++n;
        }
    }
    std::vector<int64_t> chosen;
    for (size_t r = 0; r < ranked.size(); ++r) {
        const int64_t id = ranked[r].second;
        char reason[240];
        if (apart[r] >= 0)
            std::snprintf(reason, sizeof reason,
                          "initial screening: rank %zu of %zu by predicted speedup, measured to spread the first "
                          "measurements across the space (pick %zu of %zu, %.2f from the nearest chosen before it)",
                          r + 1, ranked.size(), order[r], total - keep, apart[r]);
        else
            std::snprintf(reason, sizeof reason,
                          "initial screening: rank %zu of %zu by predicted speedup (top %zu measured)", r + 1,
                          ranked.size(), keep);
        recordGating(id, measure[r] ? GatingDecision::Measure : GatingDecision::Discard, reason);
        if (measure[r])
            chosen.push_back(id);
    }
    // An overlapped search measures the screen's choice while its first iteration chooses and queues a batch (from
    // the parents measured so far), like any batch in flight.
    if (cfg.overlap)
        s.in_flight.push_back(dispatch(chosen, 0));
    else
        measureInOrder(chosen);
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
    if (std::string spent; forecastsSpend() && forecastsAffordable({}, &spent) == 0) {
        why = spent;  // an iteration could forecast none of its children
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

void Loop::iterate() {
    ++s.iteration;
    s.timeline->setBatch(s.iteration);
    {
        const auto in_phase = phase(Phase::Model);
        refreshSpaceModel();
        refreshRecalibration();
    }
    std::optional<Timeline::Scope> proposing;
    proposing.emplace(s.timeline.get(), Phase::Proposal);
    const std::optional<int64_t> parent = s.strategy.selectParent(s.rng);
    if (!parent && !s.in_flight.empty()) {
        // An overlapped search queues a rescue batch behind those in flight, so that the workers need not wait for
        // the oldest to be applied; with nothing to rescue, the oldest batch is applied (it may give new parents).
        if (cfg.overlap && rescue()) {
            emitSimple(SearchEvent::Kind::Progress);
            return;
        }
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
    proposing.reset();
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
    std::vector<int64_t> ids = addChildren(children);
    s.space_picked.clear();
    for (int64_t id : ids)
        if (auto it = pick_reasons.find(s.cands.at(id).c.source_hash); it != pick_reasons.end())
            s.space_picked[id] = it->second;
    // A configuration the run held unmeasured, which the space model chose: forecast again and measured with these.
    for (const auto& [id, reason] : s.space_held_picks)
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
            ids.push_back(id);
            s.space_picked[id] = reason;
        }
    for (size_t i = 0; i < s.last_added.size() && i < child_calls.size(); ++i)
        if (child_calls[i])
            recordLlmCalls({*child_calls[i]}, s.last_added[i]);
    if (cfg.overlap) {
        // Queued behind the batches in flight, so the workers go on with them while the oldest is applied.
        s.in_flight.push_back(dispatch(gate(ids, false), *parent));
        applyQueued();
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

// LlmPacing::parents. "best": the elite_parents best measured parents. "forecast": the elite_parents whose children
// the search's forecaster expects to be fastest, forecasts the search already has (every child of a parent it expanded,
// measured or not): a parent's promise is the largest expected speedup over the reference among them, or its own
// measured speedup where that is larger (a parent not expanded yet has only that).
std::vector<int64_t> Loop::llmParents() const {
    const size_t n = static_cast<size_t>(cfg.llm_pacing.elite_parents);
    if (cfg.llm_pacing.parents != "forecast")
        return s.strategy.elites(n);
    std::map<int64_t, double> promise;  // measured parent -> log speedup over the reference
    for (int64_t id : s.strategy.elites(s.strategy.size()))
        promise[id] = std::log(std::max(s.strategy.speedup(id), 1e-12));
    for (const auto& [id, c] : s.cands)
        if (c.forecast && c.c.parent_id)
            if (auto it = promise.find(c.c.parent_id); it != promise.end())
                it->second = std::max(it->second, c.forecast->expectedLogSpeedupOverReference(s.scheme));
    std::vector<std::pair<double, int64_t>> ranked;
    for (const auto& [id, p] : promise)
        ranked.push_back({p, id});
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int64_t> chosen;
    for (size_t i = 0; i < ranked.size() && i < n; ++i)
        chosen.push_back(ranked[i].second);
    return chosen;
}

// LlmPacing: the best measured parents (or those the forecaster ranks first) get LLM proposals, as many as measurements
// have earned (never so many that the parent's duplicate streak could pass its limit), within what the token and cost
// budgets leave for calls as large as the largest so far. A parent only an LLM can expand, whose proposals are not
// earned yet, waits: a candidate that gating trusted is measured instead (rescue), or, with none waiting, the parent
// gets one proposal.
int Loop::llmShare(int64_t parent, bool only_llm) {
    const LlmPacing& pace = cfg.llm_pacing;
    if (s.llm_ledger.retired(parent))
        return 0;
    if (pace.elite_parents > 0) {
        const auto chosen = llmParents();
        if (std::find(chosen.begin(), chosen.end(), parent) == chosen.end())
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

// Every measured candidate has been expanded as far as the mutators go, but candidates that gating trusted without
// a measurement remain. A learning surrogate has learned since it first forecast them, so the most promising are
// forecast again (the new forecasts are stored like any other), and the one most likely to beat the best is
// measured: it can then become a parent. A search measuring in rounds (SearchConfig::round) measures a round of them,
// the most likely first, so that a pool's workers are not left idle by a rescue of one; an overlapped search queues
// them behind the batches in flight.
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
        std::vector<ForecastResult> results;
        {
            const auto in_phase = phase(Phase::Forecast);
            results = s.surrogate->forecast(queries);
        }
        for (size_t i = 0; i < asked.size() && i < results.size(); ++i)
            recordForecast(asked[i], results[i]);
    }
    struct Ranked {
        int64_t id;
        double p, mean;
    };
    std::vector<Ranked> ranked;
    for (int64_t id : waiting) {
        const Cand& c = s.cands.at(id);
        if (c.forecast)
            ranked.push_back({id, p_above(id), c.forecast->expectedLogSpeedupOverReference(s.scheme)});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Ranked& a, const Ranked& b) { return a.p > b.p || (a.p == b.p && a.mean > b.mean); });
    if (ranked.empty())
        ranked.push_back({waiting.front(), -1, 0});
    std::vector<int64_t> picks;
    for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(std::max(cfg.round, 1)); ++i)
        picks.push_back(ranked[i].id);
    picks = withinBudget(picks);
    for (size_t i = 0; i < picks.size(); ++i) {
        char reason[240];
        std::snprintf(reason, sizeof reason,
                      "no parent left to expand: measuring the trusted candidate most likely to beat the best (P = "
                      "%.2f, rank %zu of %zu waiting)",
                      std::max(ranked[i].p, 0.0), i + 1, waiting.size());
        recordGating(picks[i], GatingDecision::Measure, reason, {{"p_above_best", ranked[i].p}});
    }
    if (cfg.overlap) {
        s.in_flight.push_back(dispatch(picks, 0));
        applyQueued();
    } else {
        measureInOrder(picks);
    }
    checkpoint();
    return true;
}

}  // namespace kerncast::search_loop
