// The loop's batch gating (ARCHITECTURE §6): forecasts against the anchor, the gating decisions, the cap per parent
// and the rounds (SearchConfig::round) filled from the batch or from candidates waiting outside it.

#include "engine/search/search_loop.h"

#include "engine/search/llm_spend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kerncast::search_loop {

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
    recalibrate(f);
    {
        const auto in_phase = phase(Phase::Store);
        s.rows.forecast = s.store->addForecast(id, f);
    }
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

void Loop::recordGating(int64_t id, GatingDecision decision, const std::string& reason, nlohmann::json extra) {
    s.cands[id].decision = decision;
    extra["candidate"] = id;
    extra["decision"] = to_string(decision);
    extra["reason"] = reason;
    {
        const auto in_phase = phase(Phase::Store);
        s.store->addEvent(s.run_id, "gating", extra);
    }
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

size_t rounded_to_round(size_t chosen, size_t available, int round, int64_t room) {
    const size_t k = static_cast<size_t>(std::max(round, 1));
    if (k == 1 || chosen == 0)
        return chosen;
    size_t target = (chosen + k - 1) / k * k;
    target = std::min(target, room > 0 ? static_cast<size_t>(room) : size_t{0});
    return target > available ? chosen : std::max(target, chosen);  // too few to fill it: as chosen
}

size_t Loop::roundedBatch(size_t chosen, size_t available) const {
    return rounded_to_round(chosen, available, cfg.round, measurementsRoom());
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

// The LLM forecaster spends from the token and cost budgets like the mutations, from the first call on (the seeding's
// forecasts and the initial screen included): a batch is forecast only as far as what is left covers forecasts as
// large as the largest so far. Before any has come back its size is not known: one is asked alone, and only when what
// is left covers a typical one (llm_spend.h). The rest of the batch is not forecast, and the search ends.
bool Loop::forecastsSpend() const {
    return s.surrogate && cfg.surrogate == "llm" && (cfg.budgets.tokens > 0 || cfg.budgets.cost_usd > 0);
}

SearchRunner::State::Spend Loop::forecastSize() const {
    SearchRunner::State::Spend call = s.forecast_call_max;
    if (!s.forecast_call_known || call.tokens <= 0) {  // none back yet, or a server that counts no tokens
        LlmConfig llm;
        if (cfg.llm.is_object())
            from_json(cfg.llm, llm);
        const int64_t reply = std::min<int64_t>(llm.max_tokens, kTypicalReplyTokens);
        call.tokens = std::max(call.tokens, kTypicalForecastPromptTokens + reply);
        call.cost_usd =
            std::max(call.cost_usd, (static_cast<double>(kTypicalForecastPromptTokens) * llm.price_in_per_mtok +
                                     static_cast<double>(reply) * llm.price_out_per_mtok) /
                                        1e6);
    }
    const int64_t samples = std::max(cfg.samples, 1);
    return {call.tokens * samples, call.cost_usd * static_cast<double>(samples)};
}

size_t Loop::forecastsAffordable(const SearchRunner::State::Spend& pending, std::string* why) const {
    size_t n = std::numeric_limits<size_t>::max();
    if (!forecastsSpend())
        return n;
    const SearchRunner::State::Spend one = forecastSize();
    if (cfg.budgets.tokens > 0) {
        const int64_t left = std::max<int64_t>(cfg.budgets.tokens - s.progress.tokens - pending.tokens, 0);
        n = static_cast<size_t>(left / one.tokens);
        if (why)
            *why = "token budget spent";
    }
    if (cfg.budgets.cost_usd > 0 && one.cost_usd > 0) {
        const double left = std::max(cfg.budgets.cost_usd - s.progress.cost_usd - pending.cost_usd, 0.0);
        const auto k = static_cast<size_t>(left / one.cost_usd);
        if (k < n && why)
            *why = "cost budget spent";
        n = std::min(n, k);
    }
    return n;
}

std::vector<ForecastResult> Loop::forecastWithinBudget(const std::vector<ForecastQuery>& queries) {
    const auto in_phase = phase(Phase::Forecast);
    if (!forecastsSpend())
        return s.surrogate->forecast(queries);
    std::vector<ForecastResult> results;
    SearchRunner::State::Spend pending;  // what the results so far spent (recorded by the caller)
    while (results.size() < queries.size()) {
        size_t n = std::min(forecastsAffordable(pending), queries.size() - results.size());
        if (!s.forecast_call_known)
            n = std::min<size_t>(n, 1);
        if (n == 0)
            break;
        const auto from = queries.begin() + static_cast<std::ptrdiff_t>(results.size());
        std::vector<ForecastResult> part =
            s.surrogate->forecast(std::vector<ForecastQuery>(from, from + static_cast<std::ptrdiff_t>(n)));
        for (ForecastResult& r : part) {
            for (const LlmCall& call : r.calls) {
                pending.tokens += call.tokens_in + call.tokens_out;
                pending.cost_usd += call.cost_usd;
                s.forecast_call_max.tokens = std::max(s.forecast_call_max.tokens, call.tokens_in + call.tokens_out);
                s.forecast_call_max.cost_usd = std::max(s.forecast_call_max.cost_usd, call.cost_usd);
            }
            if (r.calls.empty() && r.forecast) {
                pending.tokens += r.forecast->tokens_in + r.forecast->tokens_out;
                pending.cost_usd += r.forecast->cost_usd;
            }
            results.push_back(std::move(r));
        }
        s.forecast_call_known = true;
        if (part.size() < n)
            break;
    }
    return results;
}

std::vector<int64_t> Loop::gate(const std::vector<int64_t>& ids, bool initial) {
    if (ids.empty())
        return {};
    const auto in_phase = phase(Phase::Gating);
    std::vector<ForecastQuery> queries;
    std::vector<int64_t> asked;
    std::vector<GatingInput> inputs(ids.size());
    std::set<int64_t> deferred;      // the surrogate asked for a measurement instead of forecasting
    std::set<int64_t> unaffordable;  // not forecast: the token or cost budget left covers no further forecast
    if (s.surrogate && s.progress.forecasts < forecastBudget()) {
        for (int64_t id : ids) {
            try {
                queries.push_back(queryFor(s.cands.at(id)));
                asked.push_back(id);
            } catch (const Error& e) {
                s.store->addEvent(s.run_id, "forecast_failed", {{"candidate", id}, {"error", e.what()}});
            }
        }
        std::vector<ForecastResult> results = forecastWithinBudget(queries);
        for (size_t i = results.size(); i < asked.size(); ++i)
            unaffordable.insert(asked[i]);
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
            } else if (unaffordable.count(ids[i])) {
                // Measured without a forecast they would spend measurements of a search the budget ends now.
                outcomes[i].decision = GatingDecision::Trust;
                outcomes[i].reason = "not forecast: what is left of the LLM budget covers no further forecast";
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

}  // namespace kerncast::search_loop
