// The loop's space model glue (SearchConfig::space_picks): the model refitted on the run's measured family
// configurations, its forecasts mixed into the surrogate's, and its picks among the unmeasured ones.

#include "engine/search/search_loop.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kerncast::search_loop {

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
        // Before the run's recalibration (search_loop_recalibration.cpp), which comes after the mixing.
        const std::array<double, kBinCount>& given = said->uncalibrated.value_or(said->probabilities);
        for (int w = 0; w < kWeights; ++w) {
            std::array<double, kBinCount> p{};
            for (size_t b = 0; b < kBinCount; ++b)
                p[b] = (1 - w / 10.0) * given[b] + w / 10.0 * space[b];
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
        s.space_index = std::set<Configuration>(s.space->begin(), s.space->end());
    }
    const std::vector<Configuration>& measured = fit.measured;
    const SpaceModel& model = *fit.model;
    s.space_held_picks.clear();
    std::optional<Configuration> refined;
    if (cfg.space_picks >= 2) {
        // The refining pick, beside the space_picks of expected improvement: the unmeasured neighbours (one tunable
        // moved to the next or previous value of its list, the rest kept) of the fastest measured configuration, the
        // one the model predicts fastest. The expected-improvement picks go where the model is unsure; this one
        // finishes the climb where the best is, which the parent's children may not: a neighbour the gate trusted as
        // no faster is never measured otherwise. Once every neighbour of the best is measured (a local optimum of
        // this neighbourhood), the climb goes on from the next fastest measured configuration whose neighbours are
        // not: best-first, so that a search held at a local optimum still walks out of it along its runners-up.
        const std::set<Configuration> done(measured.begin(), measured.end());
        std::map<Configuration, int64_t> held;            // unmeasured and not waiting for a measurement
        std::vector<std::pair<double, int64_t>> origins;  // (speedup, id) of the measured family configurations
        for (const auto& [id, c] : s.cands) {
            if (c.c.source != family.source)
                continue;
            if (!c.measurement && c.compile_error.empty() && !(c.decision && is_measured(*c.decision)))
                held.emplace(c.c.tunables, id);
            if (c.measurement && c.measurement->status == Status::Ok && c.measurement->speedup > 0 &&
                s.space_index.count(c.c.tunables))
                origins.emplace_back(c.measurement->speedup, id);
        }
        std::sort(origins.begin(), origins.end(), [](const auto& x, const auto& y) {
            return x.first != y.first ? x.first > y.first : x.second < y.second;
        });
        for (size_t rank = 0; rank < origins.size(); ++rank) {
            const Cand& origin = s.cands.at(origins[rank].second);
            std::vector<Configuration> near;
            for (const Tunable& t : family.tunables) {
                const auto at = origin.c.tunables.find(t.name);
                if (at == origin.c.tunables.end())
                    continue;
                const auto v = std::find(t.values.begin(), t.values.end(), at->second);
                if (v == t.values.end())
                    continue;
                for (const auto next : {v == t.values.begin() ? t.values.end() : v - 1, v + 1}) {
                    if (next == t.values.end())
                        continue;
                    Configuration n = origin.c.tunables;
                    n[t.name] = *next;
                    if (s.space_index.count(n) && !done.count(n) && (!fit.known.count(n) || held.count(n)))
                        near.push_back(std::move(n));
                }
            }
            if (near.empty())
                continue;
            const std::vector<SpaceModel::Prediction> predicted = model.predict(near);
            size_t top = 0;
            for (size_t i = 1; i < near.size(); ++i)
                if (predicted[i].mean > predicted[top].mean)
                    top = i;
            char reason[260];
            if (rank == 0)
                std::snprintf(reason, sizeof reason,
                              "space model: the fastest predicted of %zu unmeasured neighbours of the best "
                              "configuration (predicted %.2fx, from %zu measured)",
                              near.size(), std::exp(predicted[top].mean), measured.size());
            else
                std::snprintf(reason, sizeof reason,
                              "space model: the fastest predicted of %zu unmeasured neighbours of the measured "
                              "configuration ranked %zu (%.2fx; the %zu faster have every neighbour measured; "
                              "predicted %.2fx, from %zu measured)",
                              near.size(), rank + 1, origins[rank].first, rank, std::exp(predicted[top].mean),
                              measured.size());
            refined = near[top];
            if (auto h = held.find(near[top]); h != held.end()) {
                s.space_held_picks.push_back({h->second, reason});
            } else {
                Candidate c = family_candidate(s.bundle, near[top]);
                c.parent_id = origins[rank].second;
                c.generation = origin.c.generation + 1;
                c.label += " (space model)";
                out.push_back({std::move(c), reason});
            }
            break;
        }
    }
    std::vector<Configuration> pool;
    for (const Configuration& config : *s.space)
        if (!fit.known.count(config) && config != refined)
            pool.push_back(config);
    if (pool.empty())
        return out;
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

}  // namespace kerncast::search_loop
