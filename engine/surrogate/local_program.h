#pragma once
// The programs the local forecaster knows (a learned example, or either side of a query) and their sibling packs;
// private to the local forecaster's units (local_forecaster.h describes the model).

#include "engine/surrogate/local_forecaster.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace kerncast {

// Helpers of the local forecaster's units, named apart from the rest of kerncast.
namespace local_model {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline double log_or_nan(const std::optional<double>& v) {
    return v && *v > 0 && std::isfinite(*v) ? std::log(*v) : kNaN;
}

// Positions in local_features() of the pack-level features (the same for every program of a pack) and of the
// program's own; parent.log_speedup is a property of a lineage, not of a program, and stays out of pairs.
struct FeatureLayout {
    std::vector<size_t> pack;
    std::vector<size_t> program;
    FeatureLayout() {
        const auto& names = local_feature_names();
        for (size_t i = 0; i < names.size(); ++i) {
            if (names[i].rfind("problem.", 0) == 0 || names[i] == "ref.log_time_us")
                pack.push_back(i);
            else if (names[i] != "parent.log_speedup" && names[i] != "src.is_reference")
                program.push_back(i);
        }
    }
};
inline const FeatureLayout& layout() {
    static const FeatureLayout l;
    return l;
}

inline double slog(double x) { return std::isfinite(x) ? std::copysign(std::log2(1.0 + std::fabs(x)), x) : kNaN; }

inline size_t source_key(const std::string& source) { return std::hash<std::string>{}(source); }

inline size_t program_key(const std::string& source, const std::map<std::string, int64_t>& tunables) {
    size_t h = source_key(source);
    for (const auto& [name, value] : tunables) {
        h ^= std::hash<std::string>{}(name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<int64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
}

inline int tunables_changed(const std::map<std::string, int64_t>& c, const std::map<std::string, int64_t>& a) {
    int n = 0;
    for (const auto& [name, value] : c)
        if (const auto it = a.find(name); it == a.end() || it->second != value)
            ++n;
    for (const auto& [name, value] : a)
        n += c.count(name) ? 0 : 1;
    return n;
}

}  // namespace local_model
using namespace local_model;

// One program the model knows: a learned example, or either side of a query.
struct LocalForecaster::Program {
    std::string pack;
    double y = 0;                  // natural log of its speedup over the reference (learned examples only)
    std::vector<double> features;  // local_features()
    std::map<std::string, int64_t> tunables;
    size_t text = 0;
    size_t key = 0;           // text and tunables
    size_t config = 0;        // tunables
    size_t config_names = 0;  // the tunables' names
    size_t shape = 0;         // the launch plan: launches, blocks, threads per block, dynamic shared memory
    bool reference = false;
    std::optional<size_t> anchor_key;  // the measured program it was forecast against (not the reference)
    double ref_log_us = kNaN;          // natural log of the pack's reference time
    double floor_log_us = kNaN;        // natural log of the roofline floor: max(bytes / DRAM bandwidth, flops / peak)

    static Program of(const ForecastQuery& q) {
        Program p;
        p.pack = q.pack;
        p.features = local_features(q);
        p.tunables = q.tunables;
        p.text = source_key(q.candidate_source);
        p.key = program_key(q.candidate_source, q.tunables);
        p.config = program_key({}, q.tunables);
        std::map<std::string, int64_t> names;
        for (const auto& [name, value] : q.tunables)
            names[name] = 0;
        p.config_names = program_key({}, names);
        for (const LaunchShape& l : q.launches) {
            std::map<std::string, int64_t> dims = {{"g0", l.grid[0]},       {"g1", l.grid[1]},  {"g2", l.grid[2]},
                                                   {"b0", l.block[0]},      {"b1", l.block[1]}, {"b2", l.block[2]},
                                                   {"smem", l.dynamic_smem}};
            if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1) {  // plans without clusters keep their keys
                dims["c0"] = l.cluster[0];
                dims["c1"] = l.cluster[1];
                dims["c2"] = l.cluster[2];
            }
            p.shape = p.shape * 1000003ULL + program_key({}, dims);
        }
        p.reference = !q.reference_source.empty() && q.candidate_source == q.reference_source && q.tunables.empty();
        if (!q.anchor.is_reference && !q.anchor.source.empty())
            p.anchor_key = program_key(q.anchor.source, q.anchor.tunables);
        p.ref_log_us = log_or_nan(q.reference_time_us);
        const auto ceiling = [&](const char* key) {
            return q.hardware_table.is_object() && q.hardware_table.contains(key) && q.hardware_table[key].is_number()
                       ? q.hardware_table[key].get<double>()
                       : 0.0;
        };
        const double gbps = ceiling("dram_gbps"), tflops = ceiling("fp32_tflops");
        double floor_us = 0;
        if (gbps > 0 && q.problem_bytes > 0)
            floor_us = std::max(floor_us, q.problem_bytes / (gbps * 1e3));
        if (tflops > 0 && q.problem_flops > 0)
            floor_us = std::max(floor_us, q.problem_flops / (tflops * 1e6));
        p.floor_log_us = floor_us > 0 ? std::log(floor_us) : kNaN;
        return p;
    }
    // A learned example: its program and its measured speedup.
    static Program of(const LabelledExample& e) {
        Program p = of(e.query);
        p.y = std::log(e.speedup);
        return p;
    }
};

// The sibling packs a pair needs to be forecast from them (LocalForecaster::Siblings).
constexpr int kMinSiblings = 2;

// The learned programs of every pack whose programs all have one set of tunable names, by that set: what a pair's
// two configurations measured in the other problems of its family at the same launch shape (Model::siblings).
struct LocalForecaster::Siblings {
    struct Config {
        double log_speedup = 0;  // the mean over its measurements
        size_t shape = 0;        // Program::shape
    };
    struct Pack {
        std::string name;
        std::unordered_map<size_t, Config> configs;  // Program::config ->
    };
    std::unordered_map<size_t, std::vector<Pack>> by_names;  // Program::config_names -> packs

    static std::shared_ptr<const Siblings> of(const std::vector<Program>& programs) {
        struct Sum {
            double sum = 0;
            int count = 0;
            size_t shape = 0;
        };
        std::map<std::string, std::map<size_t, Sum>> sums;  // pack -> config ->
        std::map<std::string, std::set<size_t>> names;      // pack -> its sets of names
        for (const Program& p : programs) {
            if (p.tunables.empty() || !std::isfinite(p.y))
                continue;  // the reference and hand-written programs have no configuration
            names[p.pack].insert(p.config_names);
            Sum& s = sums[p.pack][p.config];
            s.sum += p.y;
            ++s.count;
            s.shape = p.shape;
        }
        auto out = std::make_shared<Siblings>();
        for (const auto& [pack, sets] : names) {
            if (sets.size() != 1)
                continue;  // programs of several kinds: no one configuration space to compare
            Pack entry{pack, {}};
            for (const auto& [key, s] : sums[pack])
                entry.configs[key] = {s.sum / s.count, s.shape};
            out->by_names[*sets.begin()].push_back(std::move(entry));
        }
        return out;
    }

    struct Match {
        double log_speedup = kNaN;  // the mean over the sibling packs of log speedup(c) - log speedup(a)
        double spread = kNaN;       // their standard deviation
        int packs = 0;              // the sibling packs (0 when fewer than kMinSiblings measured the pair)
    };
    // Over the other packs with the pair's tunable names that measured both configurations at the same launch shapes
    // as the pair's (the same family at the same sizes, mostly: rmsnorm's, softmax's and layernorm's rows are all 4096
    // long), when there are at least kMinSiblings of them: one sibling cannot say how far siblings disagree.
    Match logSpeedup(const Program& c, const Program& a) const {
        if (c.tunables.empty() || a.tunables.empty() || c.config_names != a.config_names)
            return {};
        const auto it = by_names.find(c.config_names);
        if (it == by_names.end())
            return {};
        double sum = 0, sum2 = 0;
        int n = 0;
        for (const Pack& p : it->second) {
            if (p.name == c.pack || p.name == a.pack)
                continue;  // a pack's own measurements reach its forecasts through training, not through this
            const auto ci = p.configs.find(c.config), ai = p.configs.find(a.config);
            if (ci == p.configs.end() || ai == p.configs.end() || ci->second.shape != c.shape ||
                ai->second.shape != a.shape)
                continue;
            const double v = ci->second.log_speedup - ai->second.log_speedup;
            sum += v;
            sum2 += v * v;
            ++n;
        }
        if (n < kMinSiblings)
            return {};
        Match m;
        m.packs = n;
        m.log_speedup = sum / n;
        m.spread = std::sqrt(std::max(sum2 / n - m.log_speedup * m.log_speedup, 0.0));
        return m;
    }
};

}  // namespace kerncast
