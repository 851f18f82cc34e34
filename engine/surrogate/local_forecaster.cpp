#include "engine/surrogate/local_forecaster.h"
#include "engine/surrogate/local_model.h"

#include "core/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace kerncast {

namespace {

// The anchor of a query seen as a program: the query with the anchor's text, tunables, report and plan.
ForecastQuery anchor_as_candidate(const ForecastQuery& q) {
    ForecastQuery a = q;
    a.candidate_source = q.anchor.source.empty() && q.anchor.is_reference ? q.reference_source : q.anchor.source;
    a.tunables = q.anchor.tunables;
    a.static_report =
        q.anchor.is_reference && q.anchor.static_report.empty() ? q.reference_static_report : q.anchor.static_report;
    a.launches = q.anchor.launches;
    a.parent_speedup.reset();
    return a;
}

}  // namespace

LocalForecasterOptions search_forecaster_options(uint64_t seed) {
    LocalForecasterOptions options;
    options.seed = seed;
    options.members = 3;
    options.rounds = 120;
    options.retrain_after = 3;
    // Members train at once (the model is the same: each booster is trained on its own thread). A search retrains
    // between batches; an overlapped one while a pool measures, where a retrain longer than a batch idles the pool.
    options.threads = options.members;
    return options;
}

LocalForecaster::LocalForecaster(LocalForecasterOptions options) : m_options(std::move(options)) {
    if (m_options.members < 2)
        throw Error("local-xgb: at least 2 members are needed (they are the cross-validation folds), found " +
                    std::to_string(m_options.members));
    if (m_options.rounds < 1)
        throw Error("local-xgb: rounds must be at least 1");
    quiet_xgboost();
}

LocalForecaster::~LocalForecaster() = default;

void LocalForecaster::learn(const std::vector<LabelledExample>& examples) {
    for (size_t i = 0; i < examples.size(); ++i)
        if (!(examples[i].speedup > 0) || !std::isfinite(examples[i].speedup))
            throw Error("local-xgb: example " + std::to_string(i + 1) + " (pack '" + examples[i].query.pack +
                        "') has speedup " + std::to_string(examples[i].speedup) +
                        "; only measured, correct programs (speedup > 0) can be learned from");
    std::vector<Program> programs;
    for (const auto& e : examples)
        programs.push_back(Program::of(e));
    std::lock_guard lock(m_mutex);
    m_programs.insert(m_programs.end(), std::make_move_iterator(programs.begin()),
                      std::make_move_iterator(programs.end()));
    m_pending += examples.size();
}

nlohmann::json LocalForecaster::checkpointState() const {
    std::lock_guard lock(m_mutex);
    return {{"examples", m_programs.size()}, {"trained_on", m_model ? m_model->examples : size_t{0}}};
}

void LocalForecaster::restoreState(const nlohmann::json& state) {
    if (!state.is_object())
        return;
    std::lock_guard lock(m_mutex);
    const size_t examples = state.value("examples", size_t{0});
    const size_t trained = state.value("trained_on", size_t{0});
    // Other examples than at the checkpoint: nothing to match, the next forecast retrains on what there is.
    if (examples != m_programs.size() || trained > examples || (m_baseCount > 0 && trained < m_baseCount))
        return;
    if (trained == 0) {
        m_model.reset();
    } else if (!m_model || m_model->examples != trained) {
        std::vector<Program> later(m_programs.begin() + static_cast<std::ptrdiff_t>(trained), m_programs.end());
        m_programs.resize(trained);
        try {
            retrainLocked();
        } catch (...) {
            m_programs.insert(m_programs.end(), later.begin(), later.end());
            throw;
        }
        m_programs.insert(m_programs.end(), later.begin(), later.end());
    }
    m_pending = examples - trained;
}

void LocalForecaster::retrain() {
    std::lock_guard lock(m_mutex);
    retrainLocked();
}

size_t LocalForecaster::exampleCount() const {
    std::lock_guard lock(m_mutex);
    return m_programs.size();
}

std::map<std::string, int> LocalForecaster::packPrograms() const {
    std::lock_guard lock(m_mutex);
    std::map<std::string, int> out;
    for (const auto& p : m_programs)
        ++out[p.pack];
    return out;
}

size_t LocalForecaster::pairCount() const {
    std::lock_guard lock(m_mutex);
    return m_model ? m_model->pairs : 0;
}

double LocalForecaster::lastRetrainSeconds() const {
    std::lock_guard lock(m_mutex);
    return m_lastRetrainSeconds;
}

double LocalForecaster::temperature() const {
    std::lock_guard lock(m_mutex);
    return m_model ? m_model->tau : 1.0;
}

double LocalForecaster::pooledResidualRms() const {
    std::lock_guard lock(m_mutex);
    return m_model ? m_model->pair.rms[0][0] : kPriorSigma;
}

std::vector<std::string> LocalForecaster::columns() const {
    std::lock_guard lock(m_mutex);
    return m_model ? m_model->columnNames() : std::vector<std::string>{};
}

LocalForecaster::Prediction LocalForecaster::predict(const ForecastQuery& query) {
    std::lock_guard lock(m_mutex);
    if (m_pending >= std::max<size_t>(1, m_options.retrain_after) || (!m_model && !m_programs.empty()))
        retrainLocked();
    return predictLocked(query);
}

LocalForecaster::Prediction LocalForecaster::predictLocked(const ForecastQuery& query) const {
    Prediction p;
    const Program c = Program::of(query);
    Program a = Program::of(anchor_as_candidate(query));
    a.y = query.anchor.is_reference ? 0.0 : log_or_nan(query.anchor.speedup);
    if (m_model)
        if (const auto count = m_model->pack_programs.find(query.pack); count != m_model->pack_programs.end())
            p.pack_examples = count->second;
    const bool anchor_known = !(query.anchor.source.empty() && query.reference_source.empty());
    if (anchor_known && c.key == a.key) {
        // The candidate is its anchor: S is 1 up to the timing noise.
        p.identical = true;
        p.prior = !m_model;
        p.log_speedup = 0;
        p.sigma = m_model ? m_model->identical_sigma : kIdenticalSigma;
        return p;
    }
    if (!m_model || m_model->pair.members.empty()) {
        p.log_speedup = 0;  // as fast as the anchor, widely
        return p;
    }
    const Model& model = *m_model;
    std::vector<double> each;
    p.prior = false;
    const double w = model.seenWeight(query.pack);
    const int cls = Model::pairClass(c, a);
    const int move = cls > 0;
    const Model::Head& head = move && !model.move.members.empty() ? model.move : model.pair;
    // The sibling packs' log S of the pair, where the calibration has a fit for pairs with siblings.
    const Siblings::Match sib = model.siblings ? model.siblings->logSpeedup(c, a) : Siblings::Match{};
    auto stack_of = [&](const Model::Head& h, int known) { return model.stackOf(h, known, move, sib); };
    if (model.stacked(head, move, sib)) {
        p.sibling_packs = sib.packs;
        p.sibling_log_speedup = sib.log_speedup;
        p.sibling_spread = sib.spread;
    }
    // The correction (a search's own measurements on a frozen base) is learned on the pair head's errors and added to
    // either head's forecast.
    const double correction = correctionOf(c, a, nullptr);
    const double base_raw = model.predictPair(head, c, a, &each);
    const double raw = base_raw + correction;
    for (double& v : each)
        v += correction;
    p.log_speedup = model.calibrated(head, base_raw, correction, w, move, sib);
    if (&head == &model.move) {
        // Half the move head for a new problem; less as the problem becomes known: the move head carries what
        // transfers between problems, a known problem's own measurements reach the forecast through the pair head
        // (and the correction).
        const double share = 0.5 * (1 - w);
        p.log_speedup =
            share * p.log_speedup +
            (1 - share) * model.calibrated(model.pair, model.predictPair(model.pair, c, a), correction, w, move, sib);
    }
    double var = 0;
    for (double v : each)
        var += (v - raw) * (v - raw);
    p.spread = each.empty() ? 0.0 : std::sqrt(var / static_cast<double>(each.size()));
    const double learned = w < 1 ? model.unseenScale(head, c, a) : kNaN;
    const double seen_base = head.temp[1] * head.rms[1][cls];
    const double unseen_base = head.temp[0] * (std::isfinite(learned) ? learned : head.rms[0][cls]);
    const double base = std::sqrt(w * seen_base * seen_base + (1 - w) * unseen_base * unseen_base);
    const double share = (w * head.change_share[1] + (1 - w) * head.change_share[0]) * p.log_speedup;
    p.sigma = std::max(std::sqrt(base * base + share * share), 1e-3);
    // Each side's climatology share (a stack's where the side forecasts from sibling packs), mixed as the calibrations
    // are.
    auto climatology_share_of = [&](int known) {
        const auto* st = stack_of(head, known);
        return st ? st->climatology_share : head.climatology_share[known];
    };
    p.climatology_share = w * climatology_share_of(1) + (1 - w) * climatology_share_of(0);
    for (size_t b = 0; b < kBinCount; ++b)
        p.climatology[b] = w * head.climatology[1][b] + (1 - w) * head.climatology[0][b];
    if (stack_of(head, 0) || stack_of(head, 1)) {
        // With sibling packs: each side's variance at the blended mu, mixed as the calibrations are.
        auto variance_of = [&](int known) {
            if (const auto* st = stack_of(head, known))
                return std::pow(st->sigma(p.log_speedup, sib), 2);
            const double b = known ? seen_base : unseen_base;
            return b * b + std::pow(head.change_share[known] * p.log_speedup, 2);
        };
        p.sigma = std::max(std::sqrt(w * variance_of(1) + (1 - w) * variance_of(0)), 1e-3);
    }
    return p;
}

std::vector<ForecastResult> LocalForecaster::forecast(const std::vector<ForecastQuery>& queries) {
    std::vector<ForecastResult> results(queries.size());
    std::lock_guard lock(m_mutex);
    try {
        if (m_pending >= std::max<size_t>(1, m_options.retrain_after) || (!m_model && !m_programs.empty()))
            retrainLocked();
    } catch (const Error& e) {
        for (auto& r : results)
            r.error = std::string("local-xgb: retraining failed: ") + e.what();
        return results;
    }
    for (size_t i = 0; i < queries.size(); ++i) {
        const auto started = std::chrono::steady_clock::now();
        try {
            const ForecastQuery& q = queries[i];
            const Prediction p = predictLocked(q);
            Forecast f = Forecast::fromRaw(mix(speedup_bins(p.log_speedup, p.sigma, m_options.scheme, kFloor),
                                               p.climatology, p.climatology_share));
            f.surrogate_id = id();
            f.scheme_id = m_options.scheme.id();
            // The distribution itself, so that gating can compare candidates beyond the last bin edge.
            f.log_mean = p.log_speedup;
            f.log_sigma = p.sigma;
            f.anchor_id = q.anchor.is_reference ? 0 : q.anchor.candidate_id;
            f.anchor_speedup = q.anchor.is_reference ? 1.0 : q.anchor.speedup;
            const std::string against =
                q.anchor.is_reference ? std::string("the reference")
                                      : (q.anchor.candidate_id ? "parent #" + std::to_string(q.anchor.candidate_id)
                                                               : std::string("its anchor"));
            char text[640];
            if (p.identical)
                std::snprintf(text, sizeof text,
                              "local-xgb: the candidate is the same program as %s, so S = 1x up to the timing noise "
                              "(sigma %.3f)",
                              against.c_str(), p.sigma);
            else if (p.prior)
                std::snprintf(text, sizeof text,
                              "local-xgb has nothing to learn from yet: a wide prior around 1x against %s (sigma %.2f)",
                              against.c_str(), p.sigma);
            else
                std::snprintf(text, sizeof text,
                              "local-xgb predicts %.2fx against %s (log S %.2f, sigma %.2f, member spread %.2f) from "
                              "%zu pairs of %zu programs, %d of pack '%s'",
                              std::exp(p.log_speedup), against.c_str(), p.log_speedup, p.sigma, p.spread,
                              m_model->pairs, m_model->examples, p.pack_examples, q.pack.c_str());
            if (p.sibling_packs > 0) {
                char more[200];
                std::snprintf(more, sizeof more,
                              "; with %d sibling problems that measured both programs (their mean %.2fx, log S "
                              "spread %.2f)",
                              p.sibling_packs, std::exp(p.sibling_log_speedup), p.sibling_spread);
                std::strncat(text, more, sizeof text - std::strlen(text) - 1);
            }
            if (p.climatology_share > 0) {
                char more[160];
                std::snprintf(more, sizeof more,
                              "; the bins mix in %.0f%% of the climatology of the problems learned (fitted out of "
                              "fold)",
                              100 * p.climatology_share);
                std::strncat(text, more, sizeof text - std::strlen(text) - 1);
            }
            f.reasoning = text;
            f.latency_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
            results[i].forecast = std::move(f);
        } catch (const std::exception& e) {
            results[i].error = std::string("local-xgb: ") + e.what();
        }
    }
    return results;
}

}  // namespace kerncast
