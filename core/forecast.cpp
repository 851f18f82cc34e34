#include "core/forecast.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kerncast {

namespace {

// Open bins are treated as one octave wide in log space ([e1/2, e1] and [e7, 2*e7]); their geometric midpoints
// are then edge/sqrt(2) and edge*sqrt(2), matching the documented fallback.
double log_lower(const BinScheme& s, int bin) {
    return bin == 1 ? std::log(s.edges()[0] / 2) : std::log(s.lowerEdge(bin));
}
double log_upper(const BinScheme& s, int bin) {
    return bin == kBinCount ? std::log(s.edges()[kBinCount - 2] * 2) : std::log(s.upperEdge(bin));
}

}  // namespace

Forecast Forecast::fromRaw(const std::array<double, kBinCount>& raw) {
    double sum = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
        if (!std::isfinite(raw[i]) || raw[i] < 0)
            throw Error("forecast: probability of bin " + std::to_string(i + 1) +
                        " must be a finite non-negative number, found " + std::to_string(raw[i]));
        sum += raw[i];
    }
    if (sum <= 0)
        throw Error("forecast: every probability is zero; expected a distribution over the 8 bins");
    if (!std::isfinite(sum))
        throw Error("forecast: the probabilities sum past the largest double; expected a distribution over the 8 bins");
    Forecast f;
    f.raw_sum = sum;
    for (size_t i = 0; i < raw.size(); ++i)
        f.probabilities[i] = raw[i] / sum;
    size_t best = 0;
    // Ties go to the lower bin, and so do near-ties that only rounding tells apart (a program forecast against
    // itself is symmetric about S = 1, the upper edge of bin 4, but bin 5 is a hair wider in log space).
    for (size_t i = 1; i < raw.size(); ++i)
        if (f.probabilities[i] > f.probabilities[best] * (1 + 1e-9))
            best = i;
    f.predicted_bin = static_cast<int>(best) + 1;
    return f;
}

double Forecast::maxProbability() const { return *std::max_element(probabilities.begin(), probabilities.end()); }

double Forecast::normalizedEntropyConfidence() const {
    double h = 0;
    for (double p : probabilities)
        if (p > 0)
            h -= p * std::log(p);
    return 1.0 - h / std::log(static_cast<double>(kBinCount));
}

double Forecast::top2Margin() const {
    auto sorted = probabilities;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    return sorted[0] - sorted[1];
}

double Forecast::expectedBin() const {
    double e = 0;
    for (size_t i = 0; i < probabilities.size(); ++i)
        e += static_cast<double>(i + 1) * probabilities[i];
    return e;
}

double Forecast::expectedLogSpeedup(const BinScheme& scheme, const std::vector<double>& openBinMeans) const {
    if (!openBinMeans.empty() && openBinMeans.size() != 2 && openBinMeans.size() != kBinCount)
        throw Error("expected log-speedup: openBinMeans must hold 2 values (bins 1 and 8) or 8 (one per bin), found " +
                    std::to_string(openBinMeans.size()));
    auto open_mean = [&](int bin) {
        if (openBinMeans.empty())
            return std::nan("");
        const size_t index = openBinMeans.size() == 2 ? (bin == 1 ? 0 : 1) : static_cast<size_t>(bin - 1);
        return openBinMeans[index];
    };
    double e = 0;
    for (int b = 1; b <= kBinCount; ++b) {
        double mid = 0.5 * (log_lower(scheme, b) + log_upper(scheme, b));
        if (b == 1 || b == kBinCount) {
            // NaN means "no measured data in that bin yet": fall back to the geometric rule.
            if (const double m = open_mean(b); std::isfinite(m))
                mid = m;
        }
        e += probabilities[b - 1] * mid;
    }
    return e;
}

double Forecast::probabilityAbove(const BinScheme& scheme, double speedup) const {
    if (!(speedup > 0))
        return 1.0;
    const double ls = std::log(speedup);
    if (log_mean && log_sigma && *log_sigma > 0)
        return std::clamp(0.5 * std::erfc((ls - *log_mean) / (*log_sigma * std::sqrt(2.0))), 0.0, 1.0);
    double p = 0;
    for (int b = 1; b <= kBinCount; ++b) {
        const double lo = log_lower(scheme, b), hi = log_upper(scheme, b);
        double share = 0;
        if (ls <= lo)
            share = 1;
        else if (ls < hi)
            share = (hi - ls) / (hi - lo);
        p += probabilities[b - 1] * share;
    }
    return std::clamp(p, 0.0, 1.0);
}

double Forecast::probabilityAboveReference(const BinScheme& scheme, double speedup) const {
    const double anchor = anchor_speedup > 0 && std::isfinite(anchor_speedup) ? anchor_speedup : 1.0;
    return probabilityAbove(scheme, speedup / anchor);
}

double Forecast::expectedLogSpeedupOverReference(const BinScheme& scheme) const {
    const double anchor = anchor_speedup > 0 && std::isfinite(anchor_speedup) ? anchor_speedup : 1.0;
    return std::log(anchor) + (log_mean ? *log_mean : expectedLogSpeedup(scheme));
}

std::array<double, kBinCount> uncalibrated_from_json(const nlohmann::json& u) {
    if (!u.is_array() || u.size() != kBinCount)
        throw Error("forecast: \"uncalibrated\" must be an array of " + std::to_string(kBinCount) + " numbers");
    std::array<double, kBinCount> out{};
    for (size_t i = 0; i < out.size(); ++i) {
        if (!u[i].is_number() || !(u[i].get<double>() >= 0) || !std::isfinite(u[i].get<double>()))
            throw Error("forecast: \"uncalibrated\" probability of bin " + std::to_string(i + 1) +
                        " must be a finite number, not negative");
        out[i] = u[i].get<double>();
    }
    // What a recalibration is fitted on: a forecast of nothing would stop the search that reads it back.
    if (!(std::accumulate(out.begin(), out.end(), 0.0) > 0))
        throw Error("forecast: \"uncalibrated\" gives no bin any probability");
    return out;
}

void to_json(nlohmann::json& j, const Forecast& f) {
    j = nlohmann::json{{"surrogate_id", f.surrogate_id},
                       {"scheme_id", f.scheme_id},
                       {"probabilities", f.probabilities},
                       {"raw_sum", f.raw_sum},
                       {"predicted_bin", f.predicted_bin},
                       {"reasoning", f.reasoning},
                       {"prompt_hash", f.prompt_hash},
                       {"tokens_in", f.tokens_in},
                       {"tokens_out", f.tokens_out},
                       {"latency_ms", f.latency_ms},
                       {"cost_usd", f.cost_usd}};
    j["anchor_id"] = f.anchor_id;
    j["anchor_speedup"] = f.anchor_speedup;
    if (f.log_mean && f.log_sigma) {
        j["log_mean"] = *f.log_mean;
        j["log_sigma"] = *f.log_sigma;
    }
    if (f.uncalibrated)
        j["uncalibrated"] = *f.uncalibrated;
}

void from_json(const nlohmann::json& j, Forecast& f) {
    if (!j.is_object())
        throw Error("forecast: expected a JSON object, found " + std::string(j.type_name()));
    const auto& p = j.contains("probabilities") ? j.at("probabilities") : nlohmann::json();
    if (!p.is_array() || p.size() != kBinCount)
        throw Error("forecast: \"probabilities\" must be an array of " + std::to_string(kBinCount) + " numbers");
    std::array<double, kBinCount> raw{};
    for (size_t i = 0; i < raw.size(); ++i) {
        if (!p[i].is_number())
            throw Error("forecast: probability of bin " + std::to_string(i + 1) + " must be a number");
        raw[i] = p[i].get<double>();
    }
    f = Forecast::fromRaw(raw);
    // A stored forecast was normalised when it was made; dividing it by its sum again would move its values by an
    // ulp or two, enough to split ties between forecasts that were equal when scored live.
    if (std::abs(f.raw_sum - 1.0) <= 1e-9)
        f.probabilities = raw;
    // A stored raw_sum describes the surrogate's original output, which renormalising a stored (already
    // normalised) vector would lose.
    f.raw_sum = j.value("raw_sum", f.raw_sum);
    // A surrogate may state its own predicted bin (the LLM tool does); keep it rather than recompute.
    f.predicted_bin = j.value("predicted_bin", f.predicted_bin);
    f.surrogate_id = j.value("surrogate_id", std::string());
    f.scheme_id = j.value("scheme_id", std::string("gf-v2"));
    f.reasoning = j.value("reasoning", std::string());
    f.prompt_hash = j.value("prompt_hash", std::string());
    f.tokens_in = j.value("tokens_in", int64_t{0});
    f.tokens_out = j.value("tokens_out", int64_t{0});
    f.latency_ms = j.value("latency_ms", 0.0);
    f.cost_usd = j.value("cost_usd", 0.0);
    f.anchor_id = j.value("anchor_id", int64_t{0});
    f.anchor_speedup = j.value("anchor_speedup", 1.0);
    if (!(f.anchor_speedup > 0) || !std::isfinite(f.anchor_speedup))
        throw Error("forecast: \"anchor_speedup\" must be a positive number, found " +
                    std::to_string(f.anchor_speedup));
    if (j.contains("log_mean") && j.contains("log_sigma") && j["log_mean"].is_number() && j["log_sigma"].is_number()) {
        f.log_mean = j["log_mean"].get<double>();
        f.log_sigma = j["log_sigma"].get<double>();
    }
    if (j.contains("uncalibrated") && !j["uncalibrated"].is_null())
        f.uncalibrated = uncalibrated_from_json(j["uncalibrated"]);
}

}  // namespace kerncast
