#include "engine/surrogate/local_forecaster.h"

#include "core/error.h"
#include "core/metrics.h"
#include "core/text_util.h"
#include "engine/surrogate/boosters.h"
#include "engine/worker/worker_protocol.h"

#include <Eigen/Dense>
#include <xgboost/c_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <regex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace kerncast {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Occurrences of `needle` anywhere in the text.
double count_substring(const std::string& text, const std::string& needle) {
    double n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
        ++n;
    return n;
}

// Identifiers that start with `prefix` (whole_word: that are exactly `prefix`).
double count_identifiers(const std::string& text, const std::string& prefix, bool whole_word) {
    double n = 0;
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + prefix.size())) {
        if (at > 0 && is_identifier_char(text[at - 1]))
            continue;
        const size_t end = at + prefix.size();
        if (whole_word && end < text.size() && is_identifier_char(text[end]))
            continue;
        ++n;
    }
    return n;
}

double sm_count_of(const ForecastQuery& q) {
    if (q.hardware_table.is_object() && q.hardware_table.contains("sm_count") &&
        q.hardware_table["sm_count"].is_number() && q.hardware_table["sm_count"].get<double>() > 0)
        return q.hardware_table["sm_count"].get<double>();
    static const std::regex sms(R"((\d+) SMs)");
    std::smatch m;
    const std::string hardware =
        q.hardware.substr(0, 256);  // untrusted (pair files); std::regex recurses per character
    if (std::regex_search(hardware, m, sms))
        return std::stod(m[1].str());
    return kNaN;
}

// The limits of one SM (compute capability 8.0 to 9.0) that occupancy is reckoned with.
constexpr double kSmThreads = 2048, kSmBlocks = 32, kSmRegisters = 65536, kSmSharedBytes = 227 * 1024;

double log_or_nan(const std::optional<double>& v) { return v && *v > 0 && std::isfinite(*v) ? std::log(*v) : kNaN; }

}  // namespace

const std::vector<std::string>& local_feature_names() {
    static const std::vector<std::string> names = {
        "static.kernels",
        "static.max_registers",
        "static.shared_bytes",
        "static.spill_bytes",
        "static.barriers",
        "static.stack_bytes",
        "plan.launches",
        "plan.total_blocks",
        "plan.threads_per_block",
        "plan.dynamic_smem",
        "plan.waves",
        "plan.log2_threads",
        "plan.bytes_per_thread",
        "plan.flops_per_thread",
        "plan.occupancy",
        "plan.filled",
        "problem.log2_bytes",
        "problem.log2_flops",
        "problem.intensity",
        "ref.log_time_us",
        "parent.log_speedup",
        "src.length",
        "src.shfl",
        "src.shared",
        "src.vector_types",
        "src.mma",
        "src.atomic",
        "src.unroll",
        "src.syncthreads",
        "src.is_reference",
    };
    return names;
}

std::vector<double> local_features(const ForecastQuery& q) {
    std::vector<double> f;
    f.reserve(local_feature_names().size());
    // Static report.
    if (q.static_report.empty()) {
        f.insert(f.end(), 6, kNaN);
    } else {
        double regs = 0, shared = 0, spills = 0, barriers = 0, stack = 0;
        for (const StaticReport& r : q.static_report) {
            regs = std::max(regs, static_cast<double>(r.registers));
            shared += r.shared_bytes;
            spills += r.spill_store_bytes + r.spill_load_bytes;
            barriers += r.barriers;
            stack = std::max(stack, static_cast<double>(r.stack_bytes));
        }
        f.insert(f.end(), {static_cast<double>(q.static_report.size()), regs, shared, spills, barriers, stack});
    }
    // Launch plan.
    if (q.launches.empty()) {
        f.insert(f.end(), 10, kNaN);
    } else {
        const double sms = sm_count_of(q);
        double blocks = 0, max_threads = 0, smem = 0, waves = 0, threads = 0;
        for (const LaunchShape& l : q.launches) {
            const double b =
                static_cast<double>(l.grid[0]) * static_cast<double>(l.grid[1]) * static_cast<double>(l.grid[2]);
            const double t =
                static_cast<double>(l.block[0]) * static_cast<double>(l.block[1]) * static_cast<double>(l.block[2]);
            blocks += b;
            max_threads = std::max(max_threads, t);
            smem = std::max(smem, static_cast<double>(l.dynamic_smem));
            waves = std::max(waves, b / sms);
            threads += b * t;
        }
        f.insert(f.end(),
                 {static_cast<double>(q.launches.size()), blocks, max_threads, smem, std::isfinite(sms) ? waves : kNaN,
                  std::log2(threads), q.problem_bytes > 0 ? q.problem_bytes / threads : kNaN,
                  q.problem_flops > 0 ? q.problem_flops / threads : kNaN});
        // Occupancy of the largest launch: the threads an SM holds at once (threads, blocks, registers and shared
        // memory each limit it), as a share of what it can hold; and the share of the GPU's thread slots the launch
        // fills (a small grid leaves SMs idle). The limits are those of compute capability 8.0 to 9.0.
        auto threads_of = [](const LaunchShape& l) {
            return l.grid[0] * l.grid[1] * l.grid[2] * l.block[0] * l.block[1] * l.block[2];
        };
        const LaunchShape* largest = &q.launches.front();
        for (const LaunchShape& l : q.launches)
            if (threads_of(l) > threads_of(*largest))
                largest = &l;
        const double t = static_cast<double>(largest->block[0] * largest->block[1] * largest->block[2]);
        double regs = 0, static_smem = 0;
        for (const StaticReport& r : q.static_report)
            if (r.kernel == largest->kernel || q.static_report.size() == 1) {
                regs = r.registers;
                static_smem = r.shared_bytes;
            }
        double resident = std::min(kSmThreads, kSmBlocks * t);
        if (regs > 0)
            resident = std::min(resident, std::floor(kSmRegisters / (std::ceil(regs / 8.0) * 8.0 * t)) * t);
        if (const double block_smem = static_smem + static_cast<double>(largest->dynamic_smem); block_smem > 0)
            resident = std::min(resident, std::floor(kSmSharedBytes / block_smem) * t);
        const double launched = static_cast<double>(largest->grid[0] * largest->grid[1] * largest->grid[2]) * t;
        f.push_back(resident / kSmThreads);
        f.push_back(std::isfinite(sms) ? std::min(launched, resident * sms) / (kSmThreads * sms) : kNaN);
    }
    // Roofline numbers of the problem.
    f.push_back(q.problem_bytes > 0 ? std::log2(q.problem_bytes) : kNaN);
    f.push_back(q.problem_flops > 0 ? std::log2(q.problem_flops) : kNaN);
    f.push_back(q.problem_bytes > 0 && q.problem_flops > 0 ? q.problem_flops / q.problem_bytes : kNaN);
    f.push_back(log_or_nan(q.reference_time_us));
    f.push_back(log_or_nan(q.parent_speedup));
    // Source text.
    const std::string& s = q.candidate_source;
    if (s.empty()) {
        f.insert(f.end(), 8, kNaN);
    } else {
        double vectors = 0;
        for (const char* type : {"float2", "float4", "double2", "half2", "__half2", "__nv_bfloat162", "int2", "int4",
                                 "uint2", "uint4", "char4", "uchar4", "short4"})
            vectors += count_identifiers(s, type, true);
        f.insert(f.end(),
                 {static_cast<double>(s.size()), count_identifiers(s, "__shfl", false),
                  count_substring(s, "__shared__"), vectors,
                  count_identifiers(s, "wmma", false) + count_substring(s, "mma_sync") + count_substring(s, "mma.sync"),
                  count_identifiers(s, "atomic", false), count_substring(s, "#pragma unroll"),
                  count_substring(s, "__syncthreads")});
    }
    f.push_back(q.reference_source.empty() || s.empty() ? kNaN : (s == q.reference_source ? 1.0 : 0.0));
    return f;
}

std::array<double, kBinCount> speedup_bins(double mu, double sigma, const BinScheme& scheme, double floor) {
    // Logistic with the variance of Normal(mu, sigma). Each bin's mass is taken from the side of mu it lies on
    // (the CDF below mu, the survival function above), so tiny tail masses keep their precision.
    const double scale = sigma * std::sqrt(3.0) / 3.14159265358979323846;
    auto cdf = [&](double x) { return 1.0 / (1.0 + std::exp(-(x - mu) / scale)); };
    auto sf = [&](double x) { return 1.0 / (1.0 + std::exp((x - mu) / scale)); };
    std::array<double, kBinCount> p{};
    for (int b = 1; b <= kBinCount; ++b) {
        const double lo = b == 1 ? -INFINITY : std::log(scheme.lowerEdge(b));
        const double hi = b == kBinCount ? INFINITY : std::log(scheme.upperEdge(b));
        double mass;
        if (hi <= mu)
            mass = (b == kBinCount ? 1.0 : cdf(hi)) - (b == 1 ? 0.0 : cdf(lo));
        else if (lo >= mu)
            mass = (b == 1 ? 1.0 : sf(lo)) - (b == kBinCount ? 0.0 : sf(hi));
        else
            mass = 1.0 - (b == 1 ? 0.0 : cdf(lo)) - (b == kBinCount ? 0.0 : sf(hi));
        p[b - 1] = (1.0 - floor) * std::max(0.0, mass) + floor / kBinCount;
    }
    return p;
}

// ---------------------------------------------------------------------------------------------------------------

namespace {

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
const FeatureLayout& layout() {
    static const FeatureLayout l;
    return l;
}

// Sign-preserving log: differences of it are log-ratios for sizes and counts, and still defined at zero.
double slog(double x) { return std::isfinite(x) ? std::copysign(std::log2(1.0 + std::fabs(x)), x) : kNaN; }

size_t text_hash(const std::string& source) { return std::hash<std::string>{}(source); }

size_t program_key(const std::string& source, const std::map<std::string, int64_t>& tunables) {
    size_t h = text_hash(source);
    for (const auto& [name, value] : tunables) {
        h ^= std::hash<std::string>{}(name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<int64_t>{}(value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
}

// Tunables whose values differ between two programs (a name only one side has counts too).
int tunables_changed(const std::map<std::string, int64_t>& c, const std::map<std::string, int64_t>& a) {
    int n = 0;
    for (const auto& [name, value] : c)
        if (const auto it = a.find(name); it == a.end() || it->second != value)
            ++n;
    for (const auto& [name, value] : a)
        n += c.count(name) ? 0 : 1;
    return n;
}

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
        p.text = text_hash(q.candidate_source);
        p.key = program_key(q.candidate_source, q.tunables);
        p.config = program_key({}, q.tunables);
        std::map<std::string, int64_t> names;
        for (const auto& [name, value] : q.tunables)
            names[name] = 0;
        p.config_names = program_key({}, names);
        for (const LaunchShape& l : q.launches) {
            const std::map<std::string, int64_t> dims = {
                {"g0", l.grid[0]},  {"g1", l.grid[1]},  {"g2", l.grid[2]},       {"b0", l.block[0]},
                {"b1", l.block[1]}, {"b2", l.block[2]}, {"smem", l.dynamic_smem}};
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

std::vector<ProgramPair> local_training_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                              const LocalPairOptions& options) {
    std::vector<LocalForecaster::Program> programs;
    programs.reserve(examples.size());
    for (const auto& e : examples)
        programs.push_back(LocalForecaster::Program::of(e.query));
    return LocalForecaster::pairsOf(programs, seed, options);
}

std::vector<ProgramPair> LocalForecaster::pairsOf(const std::vector<Program>& programs, uint64_t seed,
                                                  const LocalPairOptions& options) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 17);
    std::map<std::string, std::vector<size_t>> packs;
    for (size_t i = 0; i < programs.size(); ++i)
        packs[programs[i].pack].push_back(i);
    std::vector<ProgramPair> out;
    for (const auto& [pack, members] : packs) {
        const size_t n = members.size();
        if (n < 2)
            continue;
        std::set<std::pair<size_t, size_t>> chosen;  // unordered: (lower index, higher index)
        auto add = [&](size_t a, size_t b) {
            if (a == b || programs[a].key == programs[b].key)
                return;  // the same program measured twice teaches only the noise, which the identity rule knows
            chosen.insert({std::min(a, b), std::max(a, b)});
        };
        if (n <= options.all_pairs_up_to) {
            for (size_t i = 0; i < n; ++i)
                for (size_t j = i + 1; j < n; ++j)
                    add(members[i], members[j]);
        } else {
            std::map<size_t, size_t> by_key;
            std::optional<size_t> reference;
            for (size_t i : members) {
                by_key.emplace(programs[i].key, i);
                if (programs[i].reference && !reference)
                    reference = i;
            }
            // Programs of one text whose tunables differ in exactly one name: what a parametric move makes.
            std::map<std::pair<size_t, std::string>, std::vector<size_t>> without;
            for (size_t i : members) {
                for (const auto& [name, value] : programs[i].tunables) {
                    size_t h = programs[i].text;
                    for (const auto& [other, v] : programs[i].tunables)
                        if (other != name)
                            h ^= std::hash<std::string>{}(other)*31 + std::hash<int64_t>{}(v) + (h << 6) + (h >> 2);
                    without[{h, name}].push_back(i);
                }
            }
            std::map<size_t, std::vector<size_t>> neighbours;
            for (const auto& [k, group] : without)
                for (size_t i : group)
                    for (size_t j : group)
                        if (i != j)
                            neighbours[i].push_back(j);
            for (size_t i : members) {
                if (reference)
                    add(i, *reference);
                if (programs[i].anchor_key)
                    if (const auto it = by_key.find(*programs[i].anchor_key); it != by_key.end())
                        add(i, it->second);
                if (auto it = neighbours.find(i); it != neighbours.end()) {
                    auto& list = it->second;
                    for (size_t k = 0; k < list.size() && k < options.neighbours; ++k) {
                        const size_t j = k + static_cast<size_t>(rng() % (list.size() - k));
                        std::swap(list[k], list[j]);
                        add(i, list[k]);
                    }
                }
                // Two moves away: a neighbour's neighbour (what two moves or a crossover make).
                if (auto it = neighbours.find(i); it != neighbours.end())
                    for (size_t k = 0; k < options.two_moves; ++k) {
                        const size_t j = it->second[static_cast<size_t>(rng() % it->second.size())];
                        const auto& next = neighbours[j];
                        if (!next.empty())
                            add(i, next[static_cast<size_t>(rng() % next.size())]);
                    }
                for (size_t k = 0; k < options.random; ++k)
                    add(i, members[static_cast<size_t>(rng() % n)]);
            }
        }
        for (const auto& [a, b] : chosen) {
            // A seeded orientation: which side is the anchor carries no information.
            if (rng() & 1)
                out.push_back({a, b});
            else
                out.push_back({b, a});
        }
    }
    if (options.max_pairs > 0 && out.size() > options.max_pairs) {
        std::vector<ProgramPair> small, large;
        for (const ProgramPair& pr : out)
            (packs[programs[pr.candidate].pack].size() <= options.all_pairs_up_to ? small : large).push_back(pr);
        const size_t keep = options.max_pairs > small.size() ? options.max_pairs - small.size() : 0;
        for (size_t i = 0; i < keep && i < large.size(); ++i)
            std::swap(large[i], large[i + static_cast<size_t>(rng() % (large.size() - i))]);
        large.resize(std::min(keep, large.size()));
        out = std::move(small);
        out.insert(out.end(), large.begin(), large.end());
    }
    return out;
}

namespace {

// Moves from the best programs of each pack, directed from the better program: the pairs a search forecasts (it
// expands its best measured programs; a parametric move steps one tunable to a neighbouring value mostly, two
// sometimes, and a crossover or a jump goes further). Steps are counted in each tunable's values as the pack has
// them, sorted. The anchors are the top options.move_elite_share of a pack's programs (at least one); each gets up
// to move_one, move_two and move_more programs of its own text 1, 2 and 3 or more steps away.
std::vector<ProgramPair> elite_move_pairs(const std::vector<LocalForecaster::Program>& programs, uint64_t seed,
                                          const LocalPairOptions& options) {
    std::vector<ProgramPair> out;
    if (options.move_one + options.move_two + options.move_more == 0)
        return out;
    std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dULL + 29);
    std::map<std::string, std::vector<size_t>> packs;
    for (size_t i = 0; i < programs.size(); ++i)
        if (!programs[i].tunables.empty())
            packs[programs[i].pack].push_back(i);
    for (auto& [pack, members] : packs) {
        std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return programs[a].y > programs[b].y; });
        std::map<std::string, std::vector<int64_t>> values;  // each tunable's values in the pack, sorted
        for (size_t i : members)
            for (const auto& [name, value] : programs[i].tunables)
                values[name].push_back(value);
        for (auto& [name, v] : values) {
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
        }
        auto steps = [&](const LocalForecaster::Program& c, const LocalForecaster::Program& a) {
            size_t n = 0;
            for (const auto& [name, value] : c.tunables) {
                const auto it = a.tunables.find(name);
                if (it == a.tunables.end()) {
                    ++n;
                    continue;
                }
                const auto& v = values[name];
                const auto at = [&](int64_t x) { return std::lower_bound(v.begin(), v.end(), x) - v.begin(); };
                n += static_cast<size_t>(std::abs(at(value) - at(it->second)));
            }
            for (const auto& [name, value] : a.tunables)
                n += c.tunables.count(name) ? 0 : 1;
            return n;
        };
        const size_t anchors = std::max<size_t>(
            1, static_cast<size_t>(std::ceil(options.move_elite_share * static_cast<double>(members.size()))));
        for (size_t k = 0; k < anchors && k < members.size(); ++k) {
            const LocalForecaster::Program& a = programs[members[k]];
            std::vector<size_t> by_changes[3];
            for (size_t i : members)
                if (programs[i].text == a.text && programs[i].key != a.key)
                    by_changes[std::clamp<size_t>(steps(programs[i], a), 1, 3) - 1].push_back(i);
            const size_t want[3] = {options.move_one, options.move_two, options.move_more};
            for (int c = 0; c < 3; ++c) {
                auto& list = by_changes[c];
                for (size_t j = 0; j < want[c] && j < list.size(); ++j) {
                    std::swap(list[j], list[j + static_cast<size_t>(rng() % (list.size() - j))]);
                    out.push_back({list[j], members[k]});
                }
            }
        }
    }
    return out;
}

}  // namespace

std::vector<ProgramPair> local_move_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                          const LocalPairOptions& options) {
    std::vector<LocalForecaster::Program> programs;
    programs.reserve(examples.size());
    for (const auto& e : examples)
        programs.push_back(LocalForecaster::Program::of(e));
    return elite_move_pairs(programs, seed, options);
}

namespace {

// One booster for squared error on rows (optionally weighted), single-threaded and seeded.
Booster train_booster(const std::vector<float>& data, const std::vector<float>& labels,
                      const std::vector<float>& weights, size_t cols, const LocalForecasterOptions& o, uint64_t seed,
                      int rounds) {
    return train_squared_error_booster(data, labels, weights, cols, seed, rounds,
                                       {{"max_depth", std::to_string(o.max_depth)},
                                        {"eta", std::to_string(o.eta)},
                                        {"subsample", std::to_string(o.subsample)},
                                        {"colsample_bytree", std::to_string(o.colsample)},
                                        {"min_child_weight", std::to_string(o.min_child_weight)},
                                        {"lambda", std::to_string(o.lambda)}});
}

// fn(0) ... fn(count - 1), on up to `threads` threads at once (each job on one thread: the results do not depend on
// how many).
void for_each_parallel(int count, int threads, const std::function<void(int)>& fn) {
    const int workers = std::max(1, std::min(threads, count));
    if (workers == 1) {
        for (int k = 0; k < count; ++k)
            fn(k);
        return;
    }
    std::vector<std::thread> pool;
    std::atomic<int> next{0};
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([&] {
            for (int k = next++; k < count; k = next++)
                fn(k);
        });
    for (auto& t : pool)
        t.join();
}

}  // namespace

// Every field is kept in the model cache (saveModel() and loadModel() below): a new field goes there too.
struct LocalForecaster::Model {
    struct Member {
        Booster booster;
    };
    std::vector<std::string> tunable_names;    // sorted; the c:<NAME> and d:<NAME> columns
    std::map<std::string, int> pack_programs;  // learned programs per pack
    // Sibling packs: the learned programs' log speedups by their tunables, for packs whose programs have one set of
    // tunable names. Problems written on one family template at the same sizes (softmax, log_softmax, layernorm and
    // rmsnorm, all on rows of 4096) share much of its landscape: on the H200 the same two configurations of rmsnorm
    // and softmax differ by the same log time to a correlation of 0.92. A pair whose two configurations were measured
    // in sibling packs is forecast from the boosters' mu and the siblings' log S together (Head::stack). Built from
    // the learned programs (which the cache key covers), never saved; the boosters do not see it, so a pair without
    // siblings is forecast as if there were none. Only programs with tunables can be siblings: recordings (a Kernel
    // Tuner cache imported as one included), never imported pair files, which carry none. A recording made to
    // mislead misleads as any training data does; the stack's weights are fitted out of fold, and siblings that
    // disagree widen sigma.
    std::shared_ptr<const Siblings> siblings;
    // Pair classes, whose errors differ by an order of magnitude: programs of different texts (0), or of one text
    // with 1, 2, or 3 and more tunables changed (what a parametric move or a crossover makes is 1 or 2).
    static constexpr int kPairClasses = 4;
    static int pairClass(const Program& c, const Program& a) {
        if (c.text != a.text)
            return 0;
        return std::clamp(tunables_changed(c.tunables, a.tunables), 1, 3);
    }
    // One ensemble of boosters and how its forecasts become distributions.
    struct Head {
        std::vector<Member> members;
        // The error scale of a pack never seen, learned from the out-of-fold residuals of the packs held out whole:
        // log(|error| + kScaleFloor) from the same row as mu. How much a move matters differs by an order of
        // magnitude between kinds of kernels (an element-wise kernel's block size against a reduction's), and the
        // row's features say which kind it is. Empty when too few packs were held out.
        Booster scale;
        // Out-of-fold RMS of log S by class: [pack seen][pair class].
        double rms[2][kPairClasses] = {{kPriorSigma, kPriorSigma, kPriorSigma, kPriorSigma},
                                       {kPriorSigma, kPriorSigma, kPriorSigma, kPriorSigma}};
        // Calibration, for a pack never seen [0] and a known one [1], of other pairs [.][0] and moves [.][1]:
        // mu = slope * raw + shift, and the temperature of sigma.
        double slope[2][2] = {{1.0, 1.0}, {1.0, 1.0}};
        double shift[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
        double temp[2] = {1.0, 1.0};
        double change_share[2] = {0.0, 0.0};  // b: the share of |mu| added to sigma
        // The training packs' climatology (the bin frequencies of their out-of-fold truths, every pack weighing the
        // same), for a pack never seen [0] and a known one [1], and its share in a forecast's bins: fitted out of
        // fold, each row mixed with the climatology of the packs other than its own. Where the boosters transfer
        // badly to a problem (its landscape hangs on what no other problem shows) a sharp forecast is confidently
        // wrong; the mixture keeps mass where the other problems' moves land.
        std::array<double, kBinCount> climatology[2] = {};
        double climatology_share[2] = {0.0, 0.0};
        // A pair with sibling packs, for a pack never seen [0] and a known one [1], of other pairs [.][0] and moves
        // [.][1]: mu = raw_weight * raw + sib_weight * trust * sib + shift, where sib is the sibling packs' mean log S
        // and trust = agree^2 / (agree^2 + spread^2) falls as they disagree (their spread foretells the sibling's
        // error: a correlation of 0.68 to 0.94 on the problems with siblings), fitted on the out-of-fold rows with
        // siblings. sigma = sqrt((temp * rms)^2 + (change_share * mu)^2 + (spread_share * spread)^2), rms being its
        // out-of-fold RMS. Not fitted (fewer than kStackRows rows): such a pair is forecast as one without siblings.
        struct Stack {
            bool fitted = false;
            double raw_weight = 1.0, sib_weight = 0.0, shift = 0.0, agree = 1.0;
            double rms = kPriorSigma, temp = 1.0, change_share = 0.0, spread_share = 0.0;
            double climatology_share = 0.0;  // of the head's climatology, fitted on the stack's own rows
            double trust(double spread) const { return agree * agree / (agree * agree + spread * spread); }
            double mu(double raw, const Siblings::Match& sib) const {
                return raw_weight * raw + sib_weight * trust(sib.spread) * sib.log_speedup + shift;
            }
            double sigma(double mu, const Siblings::Match& sib) const {
                return std::sqrt(temp * temp * rms * rms + change_share * change_share * mu * mu +
                                 spread_share * spread_share * sib.spread * sib.spread);
            }
        };
        Stack stack[2][2];
    };
    // Every sampled pair, in both orientations: any candidate against any anchor.
    Head pair;
    // Moves from the best programs of each pack, directed (elite_move_pairs()): what a search asks, a child of one
    // of its best programs. Forecasts pairs of one text; empty when there were too few such moves to learn from.
    Head move;
    double identical_sigma = kIdenticalSigma;
    double tau = 1.0;  // the temperature of an unknown pack (reported)
    size_t examples = 0;
    size_t pairs = 0;

    size_t columns() const { return layout().pack.size() + 2 * layout().program.size() + 6 + 2 * tunable_names.size(); }
    std::vector<std::string> columnNames() const {
        std::vector<std::string> names;
        const auto& all = local_feature_names();
        for (size_t i : layout().pack)
            names.push_back(all[i]);
        for (size_t i : layout().program)
            names.push_back("candidate." + all[i]);
        for (size_t i : layout().program)
            names.push_back("diff." + all[i]);
        names.insert(names.end(), {"pair.same_text", "pair.tunables_changed", "candidate.is_reference",
                                   "anchor.is_reference", "anchor.log_speedup", "anchor.roofline_log"});
        for (const auto& t : tunable_names) {
            names.push_back("c:" + t);
            names.push_back("d:" + t);
        }
        return names;
    }

    // One row: the candidate c against the anchor a.
    void appendRow(std::vector<float>& out, const Program& c, const Program& a) const {
        auto put = [&](double v) { out.push_back(static_cast<float>(v)); };
        for (size_t i : layout().pack)
            put(c.features[i]);
        for (size_t i : layout().program)
            put(c.features[i]);
        for (size_t i : layout().program) {
            const double x = c.features[i], y = a.features[i];
            put(std::isfinite(x) && std::isfinite(y) ? slog(x) - slog(y) : kNaN);
        }
        put(c.text == a.text ? 1.0 : 0.0);
        put(static_cast<double>(tunables_changed(c.tunables, a.tunables)));
        put(c.reference ? 1.0 : 0.0);
        put(a.reference ? 1.0 : 0.0);
        // How good the anchor already is: its speedup over the reference, and how close it is to the roofline floor
        // (0 = at the floor). A parent near the floor has little room left, whatever the problem.
        put(a.y);
        put(std::isfinite(a.floor_log_us) && std::isfinite(a.ref_log_us) && std::isfinite(a.y)
                ? a.floor_log_us - (a.ref_log_us - a.y)
                : kNaN);
        for (const auto& name : tunable_names) {
            const auto ci = c.tunables.find(name);
            const auto ai = a.tunables.find(name);
            const double cv = ci == c.tunables.end() ? kNaN : static_cast<double>(ci->second);
            const double av = ai == a.tunables.end() ? kNaN : static_cast<double>(ai->second);
            put(slog(cv));
            put(std::isfinite(cv) && std::isfinite(av) ? slog(cv) - slog(av) : kNaN);
        }
    }

    // The mean prediction of log S over the head's members.
    double predictPair(const Head& head, const Program& c, const Program& a,
                       std::vector<double>* each = nullptr) const {
        std::vector<float> rows;
        appendRow(rows, c, a);
        double sum = 0;
        const auto& members = head.members;
        for (const auto& m : members) {
            const auto out = predict_rows(m.booster, rows, 1, columns());
            const double v = static_cast<double>(out.at(0));
            sum += v;
            if (each)
                each->push_back(v);
        }
        return members.empty() ? 0.0 : sum / static_cast<double>(members.size());
    }

    // The learned error scale of the pair for a pack never seen; NaN without a scale model.
    double unseenScale(const Head& head, const Program& c, const Program& a) const {
        if (!head.scale)
            return kNaN;
        std::vector<float> row;
        appendRow(row, c, a);
        // Shrunk towards the class's RMS (their geometric mean): a new problem can be unlike every kind learned (tensor
        // cores), and a scale learned from a few dozen packs then extrapolates far too narrow or too wide.
        const double learned = std::exp(static_cast<double>(predict_rows(head.scale, row, 1, columns()).at(0)));
        return std::sqrt(learned * head.rms[0][pairClass(c, a)]);
    }

    // How much a query's pack is known: 0 for a pack never learned, towards 1 with more programs of it.
    double seenWeight(const std::string& pack) const {
        const auto it = pack_programs.find(pack);
        const double m = it == pack_programs.end() ? 0.0 : static_cast<double>(it->second);
        return m / (m + kSeenPrograms);
    }

    // The stack of a pair with sibling packs (Head::Stack) for a pack never seen (known 0) or a known one (1); none
    // without siblings or without a fit.
    const Head::Stack* stackOf(const Head& h, int known, int move, const Siblings::Match& sib) const {
        const Head::Stack& st = h.stack[known][move];
        return sib.packs > 0 && st.fitted ? &st : nullptr;
    }
    // Whether a pair is forecast from its sibling packs: the correction (a search's own measurements) then corrects the
    // stacked forecast itself, not the boosters' raw mu that the stack weighs against the siblings.
    bool stacked(const Head& h, int move, const Siblings::Match& sib) const {
        return stackOf(h, 0, move, sib) || stackOf(h, 1, move, sib);
    }
    // The calibrated forecast of log S from a head's raw mu: mixed between the calibrations of a pack never seen and
    // a known one by w (seenWeight()). `correction` is added to raw where a side has no stack and to that side's
    // forecast where it has one.
    double calibrated(const Head& h, double raw, double correction, double w, int move,
                      const Siblings::Match& sib) const {
        auto one = [&](int known) {
            if (const Head::Stack* st = stackOf(h, known, move, sib))
                return st->mu(raw, sib) + correction;
            return h.slope[known][move] * (raw + correction) + h.shift[known][move];
        };
        return w * one(1) + (1 - w) * one(0);
    }
};

// The rows one head learns from and is calibrated on.
struct LocalForecaster::TrainingStage {
    std::vector<ProgramPair> pairs;
    std::vector<int> fold;
    std::vector<char> seen;  // the pack is not held out whole by the row's fold
    std::vector<float> weight;
    std::vector<double> oof;       // out-of-fold mu
    std::vector<char> calibrates;  // anchored as a search anchors
    Model::Head* head = nullptr;
};

namespace {

// The temperature and share of |mu| of sigma (LocalForecaster::calibrate()) with the least loss(tau, b) on a grid,
// and that loss.
struct GridFit {
    double tau = 1.0, b = 0.0, loss = 0.0;
};
GridFit grid_search(const std::function<double(double, double)>& loss) {
    double best_tau = 1.0, best_b = 0.0, best = loss(1.0, 0.0);
    for (int g = 0; g <= 24; ++g) {
        const double tau = std::exp(std::log(0.05) + g * (std::log(3.0) - std::log(0.05)) / 24.0);
        for (double b : {0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0}) {
            const double v = loss(tau, b);
            if (v < best) {
                best = v;
                best_tau = tau;
                best_b = b;
            }
        }
    }
    return {best_tau, best_b, best};
}

using Bins = std::array<double, kBinCount>;

// The shares of the climatology in a forecast's bins that calibrate() tries (Model::Head::climatology_share).
constexpr double kClimatologyShares[] = {0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5};

// (1 - share) * p + share * climatology; p itself, bit for bit, at share 0.
Bins mix(const Bins& p, const Bins& climatology, double share) {
    if (share == 0)
        return p;
    Bins out;
    for (size_t b = 0; b < kBinCount; ++b)
        out[b] = (1 - share) * p[b] + share * climatology[b];
    return out;
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

void LocalForecaster::retrainLocked() {
    if (m_baseCount > 0) {
        retrainCorrectionLocked();
        return;
    }
    m_pending = 0;
    const auto started = std::chrono::steady_clock::now();
    auto model = std::make_unique<Model>();
    model->examples = m_programs.size();
    std::set<std::string> tunable_names;
    std::vector<double> self_noise;  // log speedup of the reference timed against itself
    for (const auto& p : m_programs) {
        ++model->pack_programs[p.pack];
        for (const auto& [name, value] : p.tunables)
            tunable_names.insert(name);
        if (p.reference)
            self_noise.push_back(p.y);
    }
    model->tunable_names.assign(tunable_names.begin(), tunable_names.end());
    if (m_options.siblings)
        model->siblings = Siblings::of(m_programs);
    if (!self_noise.empty()) {
        double s2 = 0;
        for (double v : self_noise)
            s2 += v * v;
        // Shrunk towards the default with one pseudo-measurement; kept within a sane range of timing noise.
        model->identical_sigma =
            std::clamp(std::sqrt((s2 + kIdenticalSigma * kIdenticalSigma) / (self_noise.size() + 1)), 0.002, 0.02);
    }
    const std::vector<ProgramPair> pairs = pairsOf(m_programs, m_options.seed, m_options.pairs);
    model->pairs = pairs.size();
    if (pairs.size() < 2) {
        // Too little to learn a relation: the prior (and the identity rule, with the measured noise) stay.
        model->pair.members.clear();
        m_model = std::move(model);
        m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return;
    }
    const size_t cols = model->columns();
    const int folds = static_cast<int>(std::min<size_t>(static_cast<size_t>(m_options.members), pairs.size()));

    // Folds. Half of the packs (seeded) are held out whole by one fold: their out-of-fold forecasts are of a pack the
    // member never saw, which is what a new problem is. The other packs' pairs are dealt at random: their
    // out-of-fold forecasts are of a known pack. Each kind calibrates its own spread.
    std::mt19937_64 rng(m_options.seed);
    std::vector<std::string> pack_names;
    for (const auto& [pack, count] : model->pack_programs)
        pack_names.push_back(pack);
    std::shuffle(pack_names.begin(), pack_names.end(), rng);
    std::map<std::string, int> held_whole;  // pack -> its fold
    if (pack_names.size() >= 3)
        for (size_t i = 0; i < pack_names.size(); i += 2)
            held_whole[pack_names[i]] = static_cast<int>((i / 2) % static_cast<size_t>(folds));
    auto stage_of = [&](std::vector<ProgramPair> rows, Model::Head& head) {
        TrainingStage stage;
        stage.pairs = std::move(rows);
        stage.head = &head;
        const size_t n = stage.pairs.size();
        std::map<std::string, int> pack_rows;
        for (const auto& pr : stage.pairs)
            ++pack_rows[m_programs[pr.candidate].pack];
        stage.fold.resize(n);
        stage.seen.resize(n);
        stage.weight.resize(n);
        stage.oof.assign(n, kNaN);
        for (size_t r = 0; r < n; ++r) {
            const std::string& pack = m_programs[stage.pairs[r].candidate].pack;
            const auto whole = held_whole.find(pack);
            stage.fold[r] =
                whole != held_whole.end() ? whole->second : static_cast<int>(rng() % static_cast<uint64_t>(folds));
            stage.seen[r] = whole == held_whole.end();
            // A pack with few pairs (the run's own measurements) keeps some weight beside the recordings' thousands.
            stage.weight[r] = static_cast<float>(std::clamp(kSmallPackRows / pack_rows[pack], 1.0, 8.0));
        }
        return stage;
    };
    std::vector<TrainingStage> stages;
    stages.push_back(stage_of(pairs, model->pair));
    // The move head learns only when there are enough moves from packs' best programs to hold some out.
    if (std::vector<ProgramPair> moves = elite_move_pairs(m_programs, m_options.seed, m_options.pairs);
        moves.size() >= 20 * static_cast<size_t>(folds)) {
        model->pairs += moves.size();
        stages.push_back(stage_of(std::move(moves), model->move));
    }

    for (TrainingStage& stage : stages)
        stage.head->members.resize(static_cast<size_t>(folds));
    const int jobs = folds * static_cast<int>(stages.size());
    std::vector<std::string> errors(static_cast<size_t>(jobs));
    auto train_member = [&](int job) {
        const int k = job % folds;
        TrainingStage& stage = stages[static_cast<size_t>(job / folds)];
        try {
            const size_t n = stage.pairs.size();
            std::vector<float> data, labels, weights, held;
            std::vector<size_t> held_rows;
            data.reserve(n * cols);
            for (size_t r = 0; r < n; ++r) {
                const Program& c = m_programs[stage.pairs[r].candidate];
                const Program& a = m_programs[stage.pairs[r].anchor];
                if (stage.fold[r] == k && folds > 1) {
                    model->appendRow(held, c, a);
                    held_rows.push_back(r);
                    continue;
                }
                model->appendRow(data, c, a);
                labels.push_back(static_cast<float>(c.y - a.y));
                weights.push_back(stage.weight[r]);
            }
            if (labels.empty())
                throw Error("a fold holds every pair");
            Model::Member& member = stage.head->members[static_cast<size_t>(k)];
            LocalForecasterOptions o = m_options;
            if (stage.head == &model->move)
                o.max_depth = m_options.move_max_depth;
            member.booster =
                train_booster(data, labels, weights, cols, o,
                              m_options.seed * 1000003ULL + static_cast<uint64_t>(job) * 7919ULL, m_options.rounds);
            if (!held_rows.empty()) {
                const auto pred = predict_rows(member.booster, held, held_rows.size(), cols);
                for (size_t j = 0; j < held_rows.size(); ++j)
                    stage.oof[held_rows[j]] = static_cast<double>(pred[j]);
            }
        } catch (const Error& e) {
            errors[static_cast<size_t>(job)] = e.what();
        }
    };
    for_each_parallel(jobs, m_options.threads, train_member);
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);

    // The rows are those a search asks about: a search anchors its children on its best measured programs, so only
    // pairs whose anchor is among the top kEliteShare of its pack's programs calibrate the pair head (a sweep's poor
    // configurations differ from each other far more than an elite's neighbours do); every row of the move head is
    // anchored so.
    std::map<std::string, std::vector<double>> pack_speedups;
    for (const auto& p : m_programs)
        pack_speedups[p.pack].push_back(p.y);
    std::map<std::string, double> elite_from;
    for (auto& [pack, ys] : pack_speedups) {
        std::sort(ys.begin(), ys.end());
        elite_from[pack] =
            ys[static_cast<size_t>(std::floor((1.0 - kEliteShare) * static_cast<double>(ys.size() - 1)))];
    }
    for (TrainingStage& stage : stages) {
        stage.calibrates.resize(stage.pairs.size());
        for (size_t r = 0; r < stage.pairs.size(); ++r) {
            const Program& a = m_programs[stage.pairs[r].anchor];
            stage.calibrates[r] = stage.head == &model->move || a.y >= elite_from[a.pack];
        }
        calibrate(*model, stage, cols);
    }
    model->tau = model->pair.temp[0];

    m_model = std::move(model);
    m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void LocalForecaster::calibrate(Model& model, TrainingStage& stage, size_t cols) const {
    Model::Head& head = *stage.head;
    const size_t n = stage.pairs.size();
    auto truth_of = [&](size_t r) {
        return m_programs[stage.pairs[r].candidate].y - m_programs[stage.pairs[r].anchor].y;
    };
    auto class_of = [&](size_t r) {
        return Model::pairClass(m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
    };
    // What the calibration minimises for one row: its pack-weighted Brier score plus ranked probability score.
    auto bins_of = [&](double mu, double sigma) {
        return speedup_bins(mu, std::max(sigma, 1e-3), m_options.scheme, kFloor);
    };
    auto score_of_bins = [](const Bins& p, int bin, const std::pair<double, double>& weight) {
        return weight.first * brier_score(p, bin) + weight.second * ranked_probability_score(p, bin);
    };
    auto score_of = [&](double mu, double sigma, int bin, const std::pair<double, double>& weight) {
        return score_of_bins(bins_of(mu, sigma), bin, weight);
    };
    std::vector<Siblings::Match> sib_of(n);  // the sibling packs' log S of the rows that calibrate
    if (model.siblings)
        for (size_t r = 0; r < n; ++r)
            if (std::isfinite(stage.oof[r]) && stage.calibrates[r])
                sib_of[r] =
                    model.siblings->logSpeedup(m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
    // The error scale of unseen packs (see Model::Head::scale), on the rows anchored like a search's.
    {
        std::vector<float> data, labels;
        for (size_t r = 0; r < n; ++r)
            if (!stage.seen[r] && std::isfinite(stage.oof[r]) && stage.calibrates[r]) {
                model.appendRow(data, m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
                labels.push_back(static_cast<float>(std::log(std::fabs(truth_of(r) - stage.oof[r]) + kScaleFloor)));
            }
        if (labels.size() >= 200) {
            LocalForecasterOptions o = m_options;
            o.max_depth = 3;
            o.eta = 0.1;
            o.min_child_weight = 20;
            head.scale = train_booster(data, labels, {}, cols, o, m_options.seed * 7907ULL + 11, kScaleRounds);
        }
    }

    // Spread by class, from the out-of-fold residuals; a class with few residuals leans on the pooled RMS.
    double sums[2][Model::kPairClasses] = {};
    int counts[2][Model::kPairClasses] = {};
    double pooled = 0;
    int scored = 0;
    for (size_t r = 0; r < n; ++r) {
        if (!std::isfinite(stage.oof[r]))
            continue;
        const double e = truth_of(r) - stage.oof[r];
        sums[stage.seen[r] != 0][class_of(r)] += e * e;
        ++counts[stage.seen[r] != 0][class_of(r)];
        pooled += e * e;
        ++scored;
    }
    const double pooled_rms = scored > 0 ? std::sqrt(pooled / scored) : kPriorSigma;
    for (int s = 0; s < 2; ++s)
        for (int t = 0; t < Model::kPairClasses; ++t)
            head.rms[s][t] =
                std::max(std::sqrt((sums[s][t] + kShrink * pooled_rms * pooled_rms) / (counts[s][t] + kShrink)), 1e-3);
    // A pack never seen is never easier than a known one; with no pack held out whole (fewer than three packs) its
    // spread is the known one's widened by half the prior's.
    for (int t = 0; t < Model::kPairClasses; ++t)
        head.rms[0][t] = counts[0][t] == 0
                             ? std::sqrt(head.rms[1][t] * head.rms[1][t] + 0.25 * kPriorSigma * kPriorSigma)
                             : std::max(head.rms[0][t], head.rms[1][t]);

    // Calibration of a pack never seen and of a known one, each on its own out-of-fold rows: mu becomes a slope and an
    // intercept of the truth on it, fitted separately for moves (same text, tunables changed) and for other pairs (a
    // move from a pack's best program is slower on average than a model trained on both orientations says; a model
    // that transfers badly is pulled towards "as fast as the anchor"), and sigma = sqrt((tau * rms)^2 + (b * mu)^2):
    // a temperature of the class's RMS plus a share of the predicted change itself (a pair forecast to differ little
    // mostly differs little; the RMS alone would be as wide for an element-wise kernel's moves as for a reduction's).
    // tau and b minimise the Brier score plus the ranked probability score of the out-of-fold true bins, the scores
    // a forecast is judged by.
    bool calibrated[2] = {false, false};
    for (int known = 0; known < 2; ++known) {
        std::vector<size_t> rows;
        for (size_t r = 0; r < n; ++r)
            if (std::isfinite(stage.oof[r]) && stage.calibrates[r] && stage.seen[r] == known)
                rows.push_back(r);
        if (rows.size() < 20)
            continue;
        // Forecasts are judged per problem against that problem's own climatology, so each pack weighs the same in
        // the loss below, relative to its climatology's score: a pack whose moves barely matter (its truth in one
        // bin) is as costly to get wrong as one whose moves matter a lot.
        std::map<std::string, std::array<double, kBinCount>> frequencies;
        std::map<std::string, double> pack_rows;
        for (size_t r : rows) {
            const std::string& pack = m_programs[stage.pairs[r].anchor].pack;
            frequencies[pack][static_cast<size_t>(m_options.scheme.binOf(std::exp(truth_of(r))) - 1)] += 1;
            pack_rows[pack] += 1;
        }
        std::map<std::string, std::pair<double, double>> pack_weight;  // 1 / (rows * climatology's brier, rps)
        for (auto& [pack, f] : frequencies) {
            for (double& v : f)
                v /= pack_rows[pack];
            double brier = 0, rps = 0;
            for (int b = 1; b <= kBinCount; ++b) {
                brier += f[static_cast<size_t>(b - 1)] * brier_score(f, b);
                rps += f[static_cast<size_t>(b - 1)] * ranked_probability_score(f, b);
            }
            pack_weight[pack] = {1.0 / (pack_rows[pack] * std::max(brier, 0.02)),
                                 1.0 / (pack_rows[pack] * std::max(rps, 0.005))};
        }
        calibrated[known] = true;
        // The climatology of the packs and the share of it (Head::climatology) with the least loss on rows whose bins
        // without it are `p`: each row is mixed with the climatology of the other packs, so that a pack's own truths
        // never make its forecasts look better.
        std::array<double, kBinCount> frequency_sum{};
        for (const auto& [pack, f] : frequencies)
            for (size_t b = 0; b < kBinCount; ++b)
                frequency_sum[b] += f[b];
        const double packs = static_cast<double>(frequencies.size());
        for (size_t b = 0; b < kBinCount; ++b)
            head.climatology[known][b] = frequency_sum[b] / packs;
        auto climatology_share_of = [&](const std::vector<size_t>& at, const std::vector<Bins>& p,
                                        const std::vector<int>& bins,
                                        const std::vector<std::pair<double, double>>& weights) {
            if (packs < 3)
                return 0.0;
            std::vector<Bins> others(at.size());
            for (size_t j = 0; j < at.size(); ++j) {
                const auto& own = frequencies.at(m_programs[stage.pairs[at[j]].anchor].pack);
                for (size_t b = 0; b < kBinCount; ++b)
                    others[j][b] = (frequency_sum[b] - own[b]) / (packs - 1);
            }
            double least = std::numeric_limits<double>::infinity(), share = 0;
            for (double trial : kClimatologyShares) {
                double total = 0;
                for (size_t j = 0; j < at.size(); ++j)
                    total += score_of_bins(mix(p[j], others[j], trial), bins[j], weights[j]);
                if (total < least) {
                    least = total;
                    share = trial;
                }
            }
            return share;
        };
        double xy = 0, xx = 0;
        for (size_t r : rows) {
            xy += stage.oof[r] * truth_of(r);
            xx += stage.oof[r] * stage.oof[r];
        }
        const double slope = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 1.0;
        for (int move = 0; move < 2; ++move) {
            head.slope[known][move] = slope;
            head.shift[known][move] = 0;
            // Weighted least squares, each pack weighing as its climatology's Brier score says (see above).
            double n1 = 0, w1 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (size_t r : rows) {
                if ((class_of(r) > 0) != (move == 1))
                    continue;
                const double x = stage.oof[r], y = truth_of(r);
                const double w = pack_weight[m_programs[stage.pairs[r].anchor].pack].first;
                n1 += 1;
                w1 += w;
                sx += w * x;
                sy += w * y;
                sxx += w * x * x;
                sxy += w * x * y;
            }
            const double var = sxx - sx * sx / std::max(w1, 1e-300);
            if (n1 >= 20 && var > 0) {
                head.slope[known][move] = std::clamp((sxy - sx * sy / w1) / var, 0.0, 1.0);
                head.shift[known][move] = (sy - head.slope[known][move] * sx) / w1;
            }
        }
        // Pairs with sibling packs (Head::stack), on their own rows: for each agreement scale, the weighted least
        // squares of the truth on mu and the trusted sibling log S; the scale that leaves the least; then the spread
        // of what it leaves.
        for (int move = 0; move < 2; ++move) {
            Model::Head::Stack& st = head.stack[known][move];
            st = {};
            std::vector<size_t> with;
            for (size_t r : rows)
                if ((class_of(r) > 0) == (move == 1) && sib_of[r].packs > 0)
                    with.push_back(r);
            if (with.size() < kStackRows)
                continue;
            std::vector<std::pair<double, double>> weights;  // of the rows in `with`, as pack_weight gives them
            for (size_t r : with)
                weights.push_back(pack_weight[m_programs[stage.pairs[r].anchor].pack]);
            double least = std::numeric_limits<double>::infinity();
            for (double agree : {0.03, 0.06, 0.12, 0.25, 0.5, 1.0}) {
                Model::Head::Stack fit = st;
                fit.agree = agree;
                Eigen::MatrixXd x(static_cast<Eigen::Index>(with.size()), 3);
                Eigen::VectorXd y(x.rows());
                for (Eigen::Index i = 0; i < x.rows(); ++i) {
                    const size_t r = with[static_cast<size_t>(i)];
                    const double root = std::sqrt(weights[static_cast<size_t>(i)].first);
                    x.row(i) << root * stage.oof[r], root * fit.trust(sib_of[r].spread) * sib_of[r].log_speedup, root;
                    y(i) = root * truth_of(r);
                }
                const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
                if (qr.rank() < 3)
                    continue;  // mu and the siblings' log S move together: nothing tells their weights apart
                const Eigen::Vector3d beta = qr.solve(y);
                fit.raw_weight = std::clamp(beta(0), 0.0, 2.0);
                fit.sib_weight = std::clamp(beta(1), 0.0, 2.0);
                // The intercept again, for the weights as clamped.
                fit.shift = 0;
                double sw = 0, se = 0;
                for (size_t i = 0; i < with.size(); ++i) {
                    sw += weights[i].first;
                    se += weights[i].first * (truth_of(with[i]) - fit.mu(stage.oof[with[i]], sib_of[with[i]]));
                }
                fit.shift = se / sw;
                double sse = 0;
                for (size_t i = 0; i < with.size(); ++i) {
                    const double e = truth_of(with[i]) - fit.mu(stage.oof[with[i]], sib_of[with[i]]);
                    sse += weights[i].first * e * e;
                }
                if (sse < least) {
                    least = sse;
                    st = fit;
                }
            }
            if (!std::isfinite(least))
                continue;
            double e2 = 0;
            for (size_t r : with) {
                const double e = truth_of(r) - st.mu(stage.oof[r], sib_of[r]);
                e2 += e * e;
            }
            st.rms = std::max(std::sqrt(e2 / static_cast<double>(with.size())), 1e-3);
            // At most kStackCalibrationRows rows, evenly spaced, for the spread's grid; what every point of it needs
            // (mu, the true bin, the weights) is worked out once.
            const size_t kept = std::min(with.size(), kStackCalibrationRows);
            std::vector<double> mu(kept);
            std::vector<int> bin(kept);
            std::vector<size_t> at(kept);
            for (size_t i = 0; i < kept; ++i) {
                at[i] = i * with.size() / kept;
                const size_t r = with[at[i]];
                mu[i] = st.mu(stage.oof[r], sib_of[r]);
                bin[i] = m_options.scheme.binOf(std::exp(truth_of(r)));
            }
            double best = std::numeric_limits<double>::infinity();
            for (double k : {0.0, 0.5, 1.0, 2.0}) {
                Model::Head::Stack trial = st;
                trial.spread_share = k;
                const GridFit fit = grid_search([&](double tau, double b) {
                    trial.temp = tau;
                    trial.change_share = b;
                    double total = 0;
                    for (size_t i = 0; i < kept; ++i)
                        total += score_of(mu[i], trial.sigma(mu[i], sib_of[with[at[i]]]), bin[i], weights[at[i]]);
                    return total;
                });
                if (fit.loss < best) {
                    best = fit.loss;
                    st.temp = fit.tau;
                    st.change_share = fit.b;
                    st.spread_share = k;
                }
            }
            std::vector<Bins> p(kept);
            std::vector<size_t> kept_rows(kept);
            std::vector<std::pair<double, double>> kept_weights(kept);
            for (size_t i = 0; i < kept; ++i) {
                kept_rows[i] = with[at[i]];
                p[i] = bins_of(mu[i], st.sigma(mu[i], sib_of[kept_rows[i]]));
                kept_weights[i] = weights[at[i]];
            }
            st.climatology_share = climatology_share_of(kept_rows, p, bin, kept_weights);
            st.fitted = true;
        }
        // At most kCalibrationRows rows, evenly spaced, keep the grid search cheap.
        if (rows.size() > kCalibrationRows) {
            std::vector<size_t> thin;
            for (size_t i = 0; i < kCalibrationRows; ++i)
                thin.push_back(rows[i * rows.size() / kCalibrationRows]);
            rows = std::move(thin);
        }
        std::vector<double> mu, rms;
        std::vector<int> truth_bin;
        std::vector<std::pair<double, double>> row_weight;
        for (size_t r : rows) {
            const Program& c = m_programs[stage.pairs[r].candidate];
            const Program& a = m_programs[stage.pairs[r].anchor];
            row_weight.push_back(pack_weight[a.pack]);
            const int move = class_of(r) > 0;
            mu.push_back(head.slope[known][move] * stage.oof[r] + head.shift[known][move]);
            const double learned = known ? kNaN : model.unseenScale(head, c, a);
            rms.push_back(std::isfinite(learned) ? learned : head.rms[known][class_of(r)]);
            truth_bin.push_back(m_options.scheme.binOf(std::exp(truth_of(r))));
        }
        auto sigma_of = [&](size_t j, double tau, double b) {
            return std::sqrt(tau * tau * rms[j] * rms[j] + b * b * mu[j] * mu[j]);
        };
        const GridFit fit = grid_search([&](double tau, double b) {
            double total = 0;
            for (size_t j = 0; j < rows.size(); ++j)
                total += score_of(mu[j], sigma_of(j, tau, b), truth_bin[j], row_weight[j]);
            return total;
        });
        head.temp[known] = fit.tau;
        head.change_share[known] = fit.b;
        std::vector<Bins> p(rows.size());
        for (size_t j = 0; j < rows.size(); ++j)
            p[j] = bins_of(mu[j], sigma_of(j, fit.tau, fit.b));
        head.climatology_share[known] = climatology_share_of(rows, p, truth_bin, row_weight);
    }
    if (!calibrated[0] && std::none_of(stage.seen.begin(), stage.seen.end(), [](char v) { return v == 0; })) {
        for (int move = 0; move < 2; ++move) {
            head.slope[0][move] = head.slope[1][move];
            head.shift[0][move] = head.shift[1][move];
        }
        head.temp[0] = head.temp[1];
        head.change_share[0] = head.change_share[1];
        head.climatology_share[0] = head.climatology_share[1];
        head.stack[0][0] = head.stack[1][0];
        head.stack[0][1] = head.stack[1][1];
    }
    // A side with too few rows of its own takes the other side's climatology, so that the blend of both sides in
    // predictLocked() stays a distribution.
    for (int known = 0; known < 2; ++known)
        if (!calibrated[known] && calibrated[1 - known])
            head.climatology[known] = head.climatology[1 - known];
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

// ---------------------------------------------------------------------------------------------------------------
// Incremental training: a frozen base, a correction per member, and the cache of bases.

namespace {

// The correction's boosters: shallower and fewer than a member, since they learn one or a few packs' residuals.
constexpr int kCorrectionRounds = 60;
constexpr int kCorrectionDepth = 4;
// The correction's share (LocalForecaster::correctionShareOf()): folds of the run's programs, and the held-out pairs
// below which the whole correction is taken (too few to tell).
constexpr int kShareFolds = 3;
constexpr size_t kShareMinPairs = 8;
// The least share taken (kerncast-bench-leave-one-out and kerncast-bench-gated-vs-baseline: with no floor the gated
// search on the H100 recording of stencil2d fell short of measure-all, 1.538x against 1.542x; with 0.5 both
// benchmarks improve on taking the whole correction).
constexpr double kShareFloor = 0.5;
// Bump when what a cache file holds changes.
constexpr int kCacheFormat = 4;
// Cache files kept (the oldest beyond are removed); a base is a few megabytes.
constexpr size_t kCacheFiles = 48;

#ifndef KERNCAST_FORECASTER_CODE
#define KERNCAST_FORECASTER_CODE "unknown"
#endif

// FNV-1a, 64 bits: the cache key of a base (its programs, options and model code).
struct KeyHash {
    uint64_t h = 1469598103934665603ULL;
    void bytes(const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) {
            h ^= p[i];
            h *= 1099511628211ULL;
        }
    }
    template<typename T>
    void value(const T& v) {
        static_assert(std::is_arithmetic_v<T>);
        bytes(&v, sizeof v);
    }
    void text(const std::string& t) {
        value(t.size());
        bytes(t.data(), t.size());
    }
};

std::string booster_bytes(const Booster& booster) {
    bst_ulong len = 0;
    const char* out = nullptr;
    check_xgboost(XGBoosterSaveModelToBuffer(booster.get(), R"({"format": "ubj"})", &len, &out), "saving a booster");
    return base64_encode(std::string_view(out, len));
}

Booster booster_of(const std::string& b64) {
    const std::vector<char> bytes = base64_decode(b64);
    BoosterHandle handle = nullptr;
    check_xgboost(XGBoosterCreate(nullptr, 0, &handle), "creating a booster");
    Booster booster(handle);
    check_xgboost(XGBoosterLoadModelFromBuffer(handle, bytes.data(), bytes.size()), "loading a booster");
    check_xgboost(XGBoosterSetParam(handle, "nthread", "1"), "nthread");
    return booster;
}

}  // namespace

std::string forecaster_cache_dir() {
    const std::string base = xdg_base_dir("XDG_CACHE_HOME", ".cache");
    if (base.empty())
        return {};
    return (fs::path(base) / "kerncast" / "forecaster").string();
}

std::string LocalForecaster::cacheKey() const {
    KeyHash k;
    k.value(kCacheFormat);
    k.text(KERNCAST_FORECASTER_CODE);
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    k.value(major), k.value(minor), k.value(patch);
    const LocalForecasterOptions& o = m_options;
    k.value(o.seed), k.value(o.members), k.value(o.rounds), k.value(o.max_depth), k.value(o.eta);
    k.value(o.subsample), k.value(o.colsample), k.value(o.min_child_weight), k.value(o.lambda);
    k.value(o.pairs.all_pairs_up_to), k.value(o.pairs.neighbours), k.value(o.pairs.two_moves);
    k.value(o.pairs.random), k.value(o.pairs.max_pairs);
    k.value(o.pairs.move_elite_share), k.value(o.pairs.move_one), k.value(o.pairs.move_two);
    k.value(o.pairs.move_more), k.value(o.move_max_depth), k.value(o.siblings);
    k.text(o.scheme.id());
    k.value(m_programs.size());
    for (const Program& p : m_programs) {
        k.text(p.pack);
        k.value(p.y);
        k.value(p.features.size());
        for (double f : p.features)
            k.value(f);
        k.value(p.tunables.size());
        for (const auto& [name, value] : p.tunables) {
            k.text(name);
            k.value(value);
        }
        k.value(p.text), k.value(p.key), k.value(p.reference);
        k.value(p.anchor_key.has_value()), k.value(p.anchor_key.value_or(0));
        k.value(p.ref_log_us), k.value(p.floor_log_us);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(k.h));
    return hex;
}

namespace {

template<size_t N>
nlohmann::json array_of(const double (&v)[N]) {
    return std::vector<double>(v, v + N);
}
template<size_t N>
void read_array(const nlohmann::json& j, double (&v)[N]) {
    const auto read = j.get<std::vector<double>>();
    if (read.size() != N)
        throw Error("a calibration array has " + std::to_string(read.size()) + " values, expected " +
                    std::to_string(N));
    std::copy(read.begin(), read.end(), v);
}
// A climatology as calibrate() writes it: kBinCount frequencies summing to 1, or all 0 (a side never calibrated).
Bins read_climatology(const nlohmann::json& j) {
    const auto read = j.get<std::vector<double>>();
    if (read.size() != kBinCount)
        throw Error("a climatology has " + std::to_string(read.size()) + " bins, expected " +
                    std::to_string(kBinCount));
    double sum = 0;
    for (double v : read) {
        if (!(v >= 0 && v <= 1))
            throw Error("a climatology has a frequency of " + std::to_string(v));
        sum += v;
    }
    if (sum != 0 && std::abs(sum - 1) > 1e-6)
        throw Error("a climatology sums to " + std::to_string(sum) + ", not 1");
    Bins v;
    std::copy(read.begin(), read.end(), v.begin());
    return v;
}
// A climatology share as calibrate() writes it: one of kClimatologyShares' range.
double read_climatology_share(const nlohmann::json& j) {
    const double share = j.get<double>();
    if (!(share >= 0 && share <= kClimatologyShares[std::size(kClimatologyShares) - 1]))
        throw Error("a climatology share of " + std::to_string(share) + " is outside [0, " +
                    std::to_string(kClimatologyShares[std::size(kClimatologyShares) - 1]) + "]");
    return share;
}

}  // namespace

void LocalForecaster::freezeBase(const std::string& cache_dir) {
    std::lock_guard lock(m_mutex);
    if (m_programs.empty() || m_baseCount > 0)
        return;
    const std::string key = cacheKey();
    const fs::path file = cache_dir.empty() ? fs::path() : fs::path(cache_dir) / ("base-" + key + ".json");
    std::string why;
    if (!file.empty() && fs::exists(file)) {
        try {
            m_model = loadModel(nlohmann::json::parse(read_text_file(file.string(), "a cached forecaster")), key);
            if (m_options.siblings)
                m_model->siblings = Siblings::of(m_programs);
            m_pending = 0;
            m_lastRetrainSeconds = 0;
            m_baseSource = "cache " + file.string();
        } catch (const std::exception& e) {
            why = "cache " + file.string() + " unreadable, replaced: " + e.what();
        }
    }
    if (m_baseSource.empty()) {
        retrainLocked();
        m_baseSource = why.empty() ? "trained" : "trained (" + why + ")";
        if (!file.empty()) {
            try {
                std::error_code ec;
                fs::create_directories(file.parent_path(), ec);
                write_file_atomically(file.string(), saveModel(*m_model, key).dump());
                // The oldest files beyond kCacheFiles go.
                std::vector<std::pair<fs::file_time_type, fs::path>> files;
                for (const auto& entry : fs::directory_iterator(file.parent_path(), ec))
                    if (entry.path().extension() == ".json")
                        files.push_back({entry.last_write_time(ec), entry.path()});
                if (files.size() > kCacheFiles) {
                    std::sort(files.begin(), files.end());
                    for (size_t i = 0; i + kCacheFiles < files.size(); ++i)
                        fs::remove(files[i].second, ec);
                }
            } catch (const std::exception& e) {
                m_baseSource += "; not cached: " + std::string(e.what());
            }
        }
    }
    m_baseCount = m_programs.size();
    m_basePackPrograms = m_model->pack_programs;
    m_basePairs = m_model->pairs;
    m_correction.reset();
}

std::string LocalForecaster::baseSource() const {
    std::lock_guard lock(m_mutex);
    return m_baseSource;
}

double LocalForecaster::correctionShare() const {
    std::lock_guard lock(m_mutex);
    return m_correction ? m_correctionShare : 1.0;
}

size_t LocalForecaster::baseExampleCount() const {
    std::lock_guard lock(m_mutex);
    return m_baseCount;
}

void LocalForecaster::retrainCorrectionLocked() {
    m_pending = 0;
    const auto started = std::chrono::steady_clock::now();
    const std::vector<Program> late(m_programs.begin() + static_cast<std::ptrdiff_t>(m_baseCount), m_programs.end());
    Model& base = *m_model;
    base.pack_programs = m_basePackPrograms;
    for (const Program& p : late)
        ++base.pack_programs[p.pack];
    base.examples = m_programs.size();
    m_correction.reset();
    const std::vector<ProgramPair> pairs = pairsOf(late, m_options.seed, m_options.pairs);
    base.pairs = m_basePairs + pairs.size();
    if (pairs.size() < 2 || base.pair.members.empty()) {
        m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return;
    }
    auto correction = std::make_unique<Model>();
    std::set<std::string> names(base.tunable_names.begin(), base.tunable_names.end());
    for (const Program& p : late)
        for (const auto& [name, value] : p.tunables)
            names.insert(name);
    correction->tunable_names.assign(names.begin(), names.end());
    correction->siblings = base.siblings;
    const size_t n = pairs.size();
    std::vector<float> base_rows, rows, weights;
    std::map<std::string, int> pack_rows;
    for (const ProgramPair& pr : pairs)
        ++pack_rows[late[pr.candidate].pack];
    for (const ProgramPair& pr : pairs) {
        base.appendRow(base_rows, late[pr.candidate], late[pr.anchor]);
        correction->appendRow(rows, late[pr.candidate], late[pr.anchor]);
        weights.push_back(
            static_cast<float>(std::clamp(kSmallPackRows / pack_rows[late[pr.candidate].pack], 1.0, 8.0)));
    }
    // The pairs the base forecasts from their sibling packs: the pack's weight as known, the move class and the match
    // (move -1: not stacked).
    std::vector<std::tuple<double, int, Siblings::Match>> stacked_rows(n, {0.0, -1, Siblings::Match{}});
    if (base.siblings)
        for (size_t r = 0; r < n; ++r) {
            const Program& c = late[pairs[r].candidate];
            const Program& a = late[pairs[r].anchor];
            const int move = Model::pairClass(c, a) > 0 ? 1 : 0;
            const Siblings::Match sib = base.siblings->logSpeedup(c, a);
            if (base.stacked(base.pair, move, sib))
                stacked_rows[r] = {base.seenWeight(c.pack), move, sib};
        }
    LocalForecasterOptions o = m_options;
    o.max_depth = kCorrectionDepth;
    correction->pair.members.resize(base.pair.members.size());
    std::vector<std::string> errors(base.pair.members.size());
    std::vector<std::vector<float>> base_said(base.pair.members.size());
    for_each_parallel(static_cast<int>(base.pair.members.size()), m_options.threads, [&](int k) {
        try {
            // What member k still gets wrong on these pairs.
            const auto member = static_cast<size_t>(k);
            base_said[member] = predict_rows(base.pair.members[member].booster, base_rows, n, base.columns());
            std::vector<float>& said = base_said[member];
            // A pair forecast from its sibling packs: what the stacked forecast gets wrong.
            for (size_t r = 0; r < n; ++r)
                if (const auto& [w, move, sib] = stacked_rows[r]; move >= 0)
                    said[r] = static_cast<float>(base.calibrated(base.pair, said[r], 0.0, w, move, sib));
            std::vector<float> labels;
            for (size_t r = 0; r < n; ++r)
                labels.push_back(static_cast<float>(late[pairs[r].candidate].y - late[pairs[r].anchor].y) - said[r]);
            correction->pair.members[member].booster =
                train_booster(rows, labels, weights, correction->columns(), o,
                              m_options.seed * 1000033ULL + member * 7927ULL + 5, kCorrectionRounds);
        } catch (const Error& e) {
            errors[static_cast<size_t>(k)] = e.what();
        }
    });
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);
    // What the base ensemble gets wrong on each pair, for the correction's share.
    std::vector<double> residual(n, 0.0);
    for (size_t r = 0; r < n; ++r) {
        for (const auto& said : base_said)
            residual[r] += static_cast<double>(said[r]);
        residual[r] =
            late[pairs[r].candidate].y - late[pairs[r].anchor].y - residual[r] / static_cast<double>(base_said.size());
    }
    m_correctionShare = correctionShareOf(pairs, residual, rows, weights, *correction);
    correction->examples = late.size();
    correction->pairs = n;
    m_correction = std::move(correction);
    m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

double LocalForecaster::correctionShareOf(const std::vector<ProgramPair>& pairs, const std::vector<double>& residual,
                                          const std::vector<float>& rows, const std::vector<float>& weights,
                                          const Model& correction) const {
    const size_t n = pairs.size();
    const size_t cols = correction.columns();
    // Folds by program: a pair is held out by fold f when its candidate is in f and its anchor is not (a child never
    // learned, against a measured parent: what a search asks), and learned from when neither is.
    struct Fold {
        double rc = 0, cc = 0;
        size_t held = 0;
    };
    std::vector<Fold> folds(kShareFolds);
    std::vector<std::string> errors(kShareFolds);
    LocalForecasterOptions o = m_options;
    o.max_depth = kCorrectionDepth;
    auto fold = [&](int f) {
        std::vector<float> train, labels, w, test;
        std::vector<size_t> test_rows;
        for (size_t r = 0; r < n; ++r) {
            const bool candidate_in = pairs[r].candidate % kShareFolds == static_cast<size_t>(f);
            const bool anchor_in = pairs[r].anchor % kShareFolds == static_cast<size_t>(f);
            const auto row = rows.begin() + static_cast<std::ptrdiff_t>(r * cols);
            if (!candidate_in && !anchor_in) {
                train.insert(train.end(), row, row + static_cast<std::ptrdiff_t>(cols));
                labels.push_back(static_cast<float>(residual[r]));
                w.push_back(weights[r]);
            } else if (candidate_in && !anchor_in) {
                test.insert(test.end(), row, row + static_cast<std::ptrdiff_t>(cols));
                test_rows.push_back(r);
            }
        }
        if (labels.size() < 2 || test_rows.empty())
            return;
        const Booster b =
            train_booster(train, labels, w, cols, o,
                          m_options.seed * 1000037ULL + static_cast<uint64_t>(f) * 7933ULL + 3, kCorrectionRounds);
        const auto said = predict_rows(b, test, test_rows.size(), cols);
        Fold& out = folds[static_cast<size_t>(f)];
        for (size_t j = 0; j < test_rows.size(); ++j) {
            const double c = static_cast<double>(said[j]), wr = weights[test_rows[j]];
            out.rc += wr * residual[test_rows[j]] * c;
            out.cc += wr * c * c;
            ++out.held;
        }
    };
    for_each_parallel(kShareFolds, m_options.threads, [&](int f) {
        try {
            fold(f);
        } catch (const Error& e) {
            errors[static_cast<size_t>(f)] = e.what();
        }
    });
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);
    double rc = 0, cc = 0;
    size_t held = 0;
    for (const Fold& f : folds) {
        rc += f.rc;
        cc += f.cc;
        held += f.held;
    }
    // The least-squares share of the out-of-fold correction in the residual, within [kShareFloor, 1]. An out-of-fold
    // correction learned from under half the pairs (those with neither program in the fold) is noisier than the
    // correction itself, which pulls its least-squares share down: at least kShareFloor is taken.
    if (held < kShareMinPairs || !(cc > 0))
        return 1.0;
    return std::clamp(rc / cc, kShareFloor, 1.0);
}

double LocalForecaster::correctionOf(const Program& c, const Program& a, std::vector<double>* each) const {
    if (!m_correction || m_correction->pair.members.empty())
        return 0.0;
    std::vector<float> row;
    m_correction->appendRow(row, c, a);
    double sum = 0;
    const auto& members = m_correction->pair.members;
    for (size_t k = 0; k < members.size(); ++k) {
        const double v = m_correctionShare *
                         static_cast<double>(predict_rows(members[k].booster, row, 1, m_correction->columns()).at(0));
        sum += v;
        if (each && k < each->size())
            (*each)[k] += v;
    }
    return sum / static_cast<double>(members.size());
}

// The model as a cache file holds it.
nlohmann::json LocalForecaster::saveModel(const Model& m, const std::string& key) {
    // A head: its boosters in XGBoost's binary model format (UBJSON), in base64.
    auto head_json = [](const Model::Head& h) {
        nlohmann::json j = {{"rms", {array_of(h.rms[0]), array_of(h.rms[1])}},
                            {"slope", {array_of(h.slope[0]), array_of(h.slope[1])}},
                            {"shift", {array_of(h.shift[0]), array_of(h.shift[1])}},
                            {"temp", array_of(h.temp)},
                            {"change_share", array_of(h.change_share)},
                            {"climatology", {h.climatology[0], h.climatology[1]}},
                            {"climatology_share", array_of(h.climatology_share)},
                            {"members", nlohmann::json::array()},
                            {"stack", nlohmann::json::array()},
                            {"scale", h.scale ? nlohmann::json(booster_bytes(h.scale)) : nlohmann::json()}};
        for (const auto& member : h.members)
            j["members"].push_back(booster_bytes(member.booster));
        for (const auto& known : h.stack)
            for (const auto& st : known)
                j["stack"].push_back({{"fitted", st.fitted},
                                      {"raw_weight", st.raw_weight},
                                      {"sib_weight", st.sib_weight},
                                      {"shift", st.shift},
                                      {"agree", st.agree},
                                      {"spread_share", st.spread_share},
                                      {"rms", st.rms},
                                      {"temp", st.temp},
                                      {"change_share", st.change_share},
                                      {"climatology_share", st.climatology_share}});
        return j;
    };
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    return {{"format", kCacheFormat},
            {"key", key},
            {"xgboost", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
            {"tunable_names", m.tunable_names},
            {"pack_programs", m.pack_programs},
            {"identical_sigma", m.identical_sigma},
            {"tau", m.tau},
            {"examples", m.examples},
            {"pairs", m.pairs},
            {"pair", head_json(m.pair)},
            {"move", head_json(m.move)}};
}

std::unique_ptr<LocalForecaster::Model> LocalForecaster::loadModel(const nlohmann::json& j, const std::string& key) {
    if (j.value("format", 0) != kCacheFormat || j.value("key", std::string()) != key)
        throw Error("written for other programs, options or model code (key " + j.value("key", std::string("none")) +
                    ", expected " + key + ")");
    auto read_head = [](const nlohmann::json& saved, Model::Head& h) {
        for (int i = 0; i < 2; ++i) {
            read_array(saved.at("rms").at(i), h.rms[i]);
            read_array(saved.at("slope").at(i), h.slope[i]);
            read_array(saved.at("shift").at(i), h.shift[i]);
        }
        read_array(saved.at("temp"), h.temp);
        read_array(saved.at("change_share"), h.change_share);
        if (saved.at("climatology").size() != 2 || saved.at("climatology_share").size() != 2)
            throw Error("the climatologies or their shares are not one for each side");
        for (int known = 0; known < 2; ++known) {
            h.climatology[known] = read_climatology(saved.at("climatology").at(known));
            h.climatology_share[known] = read_climatology_share(saved.at("climatology_share").at(known));
        }
        for (const auto& b : saved.at("members"))
            h.members.push_back({booster_of(b.get<std::string>())});
        const auto& stack = saved.at("stack");
        if (stack.size() != 4)
            throw Error("the sibling calibration has " + std::to_string(stack.size()) + " entries, expected 4");
        for (size_t i = 0; i < 4; ++i) {
            auto& st = h.stack[i / 2][i % 2];
            st.fitted = stack[i].at("fitted").get<bool>();
            st.raw_weight = stack[i].at("raw_weight").get<double>();
            st.sib_weight = stack[i].at("sib_weight").get<double>();
            st.shift = stack[i].at("shift").get<double>();
            st.agree = stack[i].at("agree").get<double>();
            st.spread_share = stack[i].at("spread_share").get<double>();
            st.rms = stack[i].at("rms").get<double>();
            st.temp = stack[i].at("temp").get<double>();
            st.change_share = stack[i].at("change_share").get<double>();
            st.climatology_share = read_climatology_share(stack[i].at("climatology_share"));
        }
        if (!saved.at("scale").is_null())
            h.scale = booster_of(saved.at("scale").get<std::string>());
    };
    auto m = std::make_unique<Model>();
    try {
        m->tunable_names = j.at("tunable_names").get<std::vector<std::string>>();
        m->pack_programs = j.at("pack_programs").get<std::map<std::string, int>>();
        m->identical_sigma = j.at("identical_sigma").get<double>();
        m->tau = j.at("tau").get<double>();
        m->examples = j.at("examples").get<size_t>();
        m->pairs = j.at("pairs").get<size_t>();
        read_head(j.at("pair"), m->pair);
        read_head(j.at("move"), m->move);
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed: ") + e.what());
    }
    return m;
}

}  // namespace kerncast
