// The loop's checkpoints and resume (ARCHITECTURE §7): the consistent state a resumed run goes back to, and the
// state rebuilt from the run file.

#include "engine/search/search_loop.h"

#include "core/suspect_review.h"

#include <algorithm>

namespace kerncast::search_loop {

// A consistent state of the search: what a resumed run goes back to (restore()). The rows written so far, the
// random state, the seeding stage and the surrogate's training point are enough to continue exactly as the search
// would have without the interruption.
void Loop::checkpoint() {
    const auto in_phase = phase(Phase::Store);
    nlohmann::json payload = {
        {"rng", std::to_string(s.rng.state())},
        {"iteration", s.iteration},
        {"elapsed_s", s.elapsed_before + seconds_since(s.started)},
        {"rows", {{"candidate", s.rows.candidate}, {"forecast", s.rows.forecast}, {"measurement", s.rows.measurement}}},
        {"seeded", s.seeded}};
    // One batch in flight as an object (as runs stored before several could be), more as a list, oldest first.
    nlohmann::json in_flight = nlohmann::json::array();
    for (const auto& b : s.in_flight)
        in_flight.push_back({{"parent", b.parent}, {"candidates", b.ids}});
    if (in_flight.size() == 1)
        payload["in_flight"] = in_flight[0];
    else if (!in_flight.empty())
        payload["in_flight"] = in_flight;
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
    restrictFamilyToRecording();
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
        if (!reportAtMeasurement(c))
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
    // The batches an overlapped search had in flight are queued again (as the interrupted session had them), to be
    // applied as they would have been; they are not measured ahead of them.
    if (in_flight.is_object())
        in_flight = nlohmann::json::array({in_flight});
    if (!in_flight.is_array())
        in_flight = nlohmann::json::array();
    std::vector<std::pair<int64_t, std::vector<int64_t>>> queued;  // parent, candidates
    for (const auto& b : in_flight) {
        if (!b.is_object())
            continue;
        std::vector<int64_t> ids;
        for (const auto& id : b.value("candidates", nlohmann::json::array()))
            if (id.is_number_integer() && std::find(pending.begin(), pending.end(), id.get<int64_t>()) != pending.end())
                ids.push_back(id.get<int64_t>());
        queued.push_back({b.value("parent", int64_t{0}), ids});
    }
    if (!queued.empty()) {
        std::vector<int64_t> rest;
        for (int64_t id : pending)
            if (std::none_of(queued.begin(), queued.end(), [&](const auto& q) {
                    return std::find(q.second.begin(), q.second.end(), id) != q.second.end();
                }))
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
    for (const auto& [parent, ids] : queued)
        s.in_flight.push_back(dispatch(ids, parent));
    checkpoint();
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

}  // namespace kerncast::search_loop
