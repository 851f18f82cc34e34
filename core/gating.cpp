#include "core/gating.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace kerncast {

uint64_t SplitMix::next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double SplitMix::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t SplitMix::below(uint64_t n) { return n == 0 ? 0 : next() % n; }

const char* to_string(GatingDecision decision) {
    switch (decision) {
    case GatingDecision::Measure:
        return "measure";
    case GatingDecision::Trust:
        return "trust";
    case GatingDecision::Audit:
        return "audit";
    case GatingDecision::Discard:
        return "discard";
    case GatingDecision::Forced:
        return "forced";
    }
    return "measure";
}

GatingDecision gating_decision_from_string(const std::string& name) {
    for (auto d : {GatingDecision::Measure, GatingDecision::Trust, GatingDecision::Audit, GatingDecision::Discard,
                   GatingDecision::Forced})
        if (name == to_string(d))
            return d;
    throw Error("unknown gating decision '" + name + "' (expected measure, trust, audit, discard or forced)");
}

const char* to_string(GatingKind kind) {
    switch (kind) {
    case GatingKind::MeasureAll:
        return "measure-all";
    case GatingKind::TopK:
        return "top-k";
    case GatingKind::Selective:
        return "selective";
    }
    return "selective";
}

GatingKind gating_kind_from_string(const std::string& name) {
    for (auto k : {GatingKind::MeasureAll, GatingKind::TopK, GatingKind::Selective})
        if (name == to_string(k))
            return k;
    throw Error("unknown gating policy '" + name + "' (expected measure-all, top-k or selective)");
}

void to_json(nlohmann::json& j, const GatingConfig& c) {
    j = {{"policy", to_string(c.kind)}, {"top_k", c.top_k}, {"tau", c.tau}, {"pi", c.pi}, {"epsilon", c.epsilon}};
}

GatingConfig gating_config_from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw Error("gating settings must be a JSON object");
    GatingConfig c;
    auto number = [&](const char* key, double lo, double hi, double& out) {
        if (!j.contains(key))
            return;
        if (!j[key].is_number())
            throw Error(std::string("gating '") + key + "' must be a number");
        const double v = j[key].get<double>();
        if (!(v >= lo && v <= hi))
            throw Error(std::string("gating '") + key + "' must lie in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "], got " + std::to_string(v));
        out = v;
    };
    if (j.contains("policy")) {
        if (!j["policy"].is_string())
            throw Error("gating 'policy' must be a string");
        c.kind = gating_kind_from_string(j["policy"].get<std::string>());
    }
    double k = c.top_k;
    number("top_k", 1, 1000, k);
    c.top_k = static_cast<int>(k);
    number("tau", 0, 1, c.tau);
    number("pi", 0, 1, c.pi);
    number("epsilon", 0, 1, c.epsilon);
    return c;
}

std::string describe(const GatingConfig& c) {
    char buf[160];
    switch (c.kind) {
    case GatingKind::MeasureAll:
        return "measure-all";
    case GatingKind::TopK:
        std::snprintf(buf, sizeof buf, "top-k k=%d eps=%.2f", c.top_k, c.epsilon);
        break;
    case GatingKind::Selective:
        std::snprintf(buf, sizeof buf, "selective tau=%.2f pi=%.2f eps=%.2f", c.tau, c.pi, c.epsilon);
        break;
    }
    return buf;
}

std::vector<GatingOutcome> decide_gating(const GatingConfig& config, const std::vector<GatingInput>& batch,
                                         const BinScheme& scheme, double best_speedup, SplitMix& rng) {
    std::vector<GatingOutcome> out(batch.size());
    char buf[200];
    for (size_t i = 0; i < batch.size(); ++i) {
        if (!batch[i].forecast)
            continue;
        // The surrogate's own forecast: tau and pi are thresholds on what surrogates say, and a run's recalibration
        // (Forecast::uncalibrated) changes what the run shows and scores, never what it measures.
        Forecast f = *batch[i].forecast;
        if (f.uncalibrated)
            f.probabilities = *f.uncalibrated;
        out[i].confidence = f.maxProbability();
        out[i].p_above_best = best_speedup > 0 ? f.probabilityAboveReference(scheme, best_speedup) : 1.0;
    }
    auto audit = [&](GatingOutcome& o) {
        if (config.epsilon > 0 && rng.uniform() < config.epsilon) {
            o.reason += "; picked for the audit share";
            o.decision = GatingDecision::Audit;
        }
    };
    switch (config.kind) {
    case GatingKind::MeasureAll:
        for (auto& o : out) {
            o.decision = GatingDecision::Measure;
            o.reason = "measure-all";
        }
        return out;
    case GatingKind::TopK: {
        std::vector<size_t> order(batch.size());
        std::iota(order.begin(), order.end(), 0);
        auto expected = [&](size_t i) { return batch[i].forecast ? batch[i].forecast->expectedBin() : 1e9; };
        // Equal expected bins (e.g. everything in the last bin) are told apart by the continuous prediction when
        // the surrogate gives one.
        auto mean = [&](size_t i) {
            return batch[i].forecast ? batch[i].forecast->expectedLogSpeedupOverReference(scheme) : 0.0;
        };
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return expected(a) != expected(b) ? expected(a) > expected(b) : mean(a) > mean(b);
        });
        for (size_t r = 0; r < order.size(); ++r) {
            auto& o = out[order[r]];
            if (!batch[order[r]].forecast) {
                o.decision = GatingDecision::Measure;
                o.reason = "no forecast";
            } else if (static_cast<int>(r) < config.top_k) {
                o.decision = GatingDecision::Measure;
                std::snprintf(buf, sizeof buf, "rank %zu of %zu by expected bin (top %d)", r + 1, order.size(),
                              config.top_k);
                o.reason = buf;
            } else {
                o.decision = GatingDecision::Discard;
                std::snprintf(buf, sizeof buf, "rank %zu of %zu by expected bin, below the top %d", r + 1, order.size(),
                              config.top_k);
                o.reason = buf;
            }
        }
        for (size_t i = 0; i < out.size(); ++i)
            if (out[i].decision == GatingDecision::Discard)
                audit(out[i]);
        return out;
    }
    case GatingKind::Selective:
        for (size_t i = 0; i < batch.size(); ++i) {
            auto& o = out[i];
            if (!batch[i].forecast) {
                o.decision = GatingDecision::Measure;
                o.reason = "no forecast";
                continue;
            }
            if (o.confidence < config.tau) {
                o.decision = GatingDecision::Measure;
                std::snprintf(buf, sizeof buf, "unsure: confidence %.2f < tau %.2f", o.confidence, config.tau);
                o.reason = buf;
            } else if (o.p_above_best >= config.pi) {
                o.decision = GatingDecision::Measure;
                std::snprintf(buf, sizeof buf, "promising: P(S > best %.3g) = %.2f >= pi %.2f", best_speedup,
                              o.p_above_best, config.pi);
                o.reason = buf;
            } else {
                const Forecast& f = *batch[i].forecast;
                const double expected = std::exp(f.expectedLogSpeedupOverReference(scheme));
                o.decision = expected <= best_speedup ? GatingDecision::Discard : GatingDecision::Trust;
                // Every number the decision rests on, so that a discarded candidate says why against tau and pi.
                std::snprintf(buf, sizeof buf,
                              "trusted: confidence %.2f >= tau %.2f, P(S > best %.3g) = %.2f < pi %.2f, expected "
                              "%.3gx%s",
                              o.confidence, config.tau, best_speedup, o.p_above_best, config.pi, expected,
                              o.decision == GatingDecision::Discard ? " <= best" : "");
                o.reason = buf;
                audit(o);
            }
        }
        return out;
    }
    return out;
}

}  // namespace kerncast
