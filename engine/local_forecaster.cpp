#include "engine/local_forecaster.h"

#include "core/error.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
#include <regex>
#include <set>
#include <thread>

namespace kerncast {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check(int rc, const char* what) {
    if (rc != 0)
        throw Error(std::string("XGBoost: ") + what + ": " + XGBGetLastError());
}

// XGBoost prints warnings on stderr by default; a surrogate reports through its results instead.
void quiet_xgboost() {
    static std::once_flag once;
    std::call_once(once, [] { XGBSetGlobalConfig(R"({"verbosity": 0})"); });
}

struct DMatrix {
    DMatrixHandle handle = nullptr;
    DMatrix(const std::vector<float>& data, size_t rows, size_t cols) {
        check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &handle),
              "creating a data matrix");
    }
    ~DMatrix() {
        if (handle)
            XGDMatrixFree(handle);
    }
    DMatrix(const DMatrix&) = delete;
    DMatrix& operator=(const DMatrix&) = delete;
};

struct BoosterDeleter {
    void operator()(void* handle) const {
        if (handle)
            XGBoosterFree(handle);
    }
};
using Booster = std::unique_ptr<void, BoosterDeleter>;

std::vector<float> predict_rows(const Booster& booster, const std::vector<float>& data, size_t rows, size_t cols) {
    DMatrix m(data, rows, cols);
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(booster.get(), m.handle, 0, 0, 0, &len, &out), "predicting");
    return std::vector<float>(out, out + len);
}

bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

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
    if (q.hardware_table.is_object() && q.hardware_table.contains("sm_count")
        && q.hardware_table["sm_count"].is_number() && q.hardware_table["sm_count"].get<double>() > 0)
        return q.hardware_table["sm_count"].get<double>();
    static const std::regex sms(R"((\d+) SMs)");
    std::smatch m;
    const std::string hardware = q.hardware.substr(0, 256);  // untrusted (pair files); std::regex recurses per character
    if (std::regex_search(hardware, m, sms))
        return std::stod(m[1].str());
    return kNaN;
}

double log_or_nan(const std::optional<double>& v) {
    return v && *v > 0 && std::isfinite(*v) ? std::log(*v) : kNaN;
}

// A portable draw for fold assignment (std::uniform_int_distribution differs between
// standard libraries, and a seed must give the same folds everywhere).
uint64_t draw(std::mt19937_64& rng, uint64_t bound) {
    return rng() % bound;
}

double normal_cdf(double z) {
    return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double mean_of(const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

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
        f.insert(f.end(), 8, kNaN);
    } else {
        const double sms = sm_count_of(q);
        double blocks = 0, max_threads = 0, smem = 0, waves = 0, threads = 0;
        for (const LaunchShape& l : q.launches) {
            const double b
                = static_cast<double>(l.grid[0]) * static_cast<double>(l.grid[1]) * static_cast<double>(l.grid[2]);
            const double t
                = static_cast<double>(l.block[0]) * static_cast<double>(l.block[1]) * static_cast<double>(l.block[2]);
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
    std::array<double, kBinCount> p {};
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

struct LocalForecaster::Model {
    using SourceKey = std::pair<std::string, size_t>;  // (pack, hash of the candidate source)
    struct Member {
        Booster booster;
        std::map<std::string, double> offsets;  // pack -> shrunk mean log-speedup of this member's training rows
        std::map<SourceKey, int> sources;  // examples of this member's training rows per (pack, source)
    };
    std::vector<std::string> tunable_names;  // sorted; the t:<NAME> columns
    std::vector<Member> members;
    std::map<std::string, int> pack_examples;
    std::map<SourceKey, int> sources;  // every example
    std::map<std::pair<std::string, bool>, double> sigma;  // (pack, novel source) -> shrunk out-of-fold RMS
    double pooled_rms[2] = {kPriorSigma, kPriorSigma};  // by novel source
    double offset_variance = kPriorSigma * kPriorSigma;  // of the pack offsets: what an unseen pack adds
    double tau = 1.0;
    size_t examples = 0;

    size_t columns() const { return local_feature_names().size() + 2 + tunable_names.size(); }

    void appendRow(std::vector<float>& out, const std::vector<double>& fixed, double offset, int same_source,
                   const std::map<std::string, int64_t>& tunables) const {
        for (double v : fixed)
            out.push_back(static_cast<float>(v));
        out.push_back(static_cast<float>(offset));
        out.push_back(static_cast<float>(same_source));
        for (const auto& name : tunable_names) {
            const auto it = tunables.find(name);
            out.push_back(it == tunables.end() ? std::numeric_limits<float>::quiet_NaN()
                                               : static_cast<float>(it->second));
        }
    }

    // The residual scale of a query's class: its pack's (shrunk), or for a pack never seen the pooled one widened
    // by how much pack levels differ.
    double baseSigma(const std::string& pack, bool novel) const {
        if (const auto it = sigma.find({pack, novel}); it != sigma.end())
            return it->second;
        return std::sqrt(pooled_rms[novel] * pooled_rms[novel] + offset_variance);
    }
};

LocalForecaster::LocalForecaster(LocalForecasterOptions options) : m_options(std::move(options)) {
    if (m_options.members < 2)
        throw Error("local-xgb: at least 2 members are needed (they are the cross-validation folds), found "
                    + std::to_string(m_options.members));
    if (m_options.rounds < 1)
        throw Error("local-xgb: rounds must be at least 1");
    quiet_xgboost();
}

LocalForecaster::~LocalForecaster() = default;

void LocalForecaster::learn(const std::vector<LabelledExample>& examples) {
    for (size_t i = 0; i < examples.size(); ++i)
        if (!(examples[i].speedup > 0) || !std::isfinite(examples[i].speedup))
            throw Error("local-xgb: example " + std::to_string(i + 1) + " (pack '" + examples[i].query.pack
                        + "') has speedup " + std::to_string(examples[i].speedup)
                        + "; only measured, correct programs (speedup > 0) can be learned from");
    std::lock_guard lock(m_mutex);
    m_examples.insert(m_examples.end(), examples.begin(), examples.end());
    m_pending += examples.size();
}

nlohmann::json LocalForecaster::checkpointState() const {
    std::lock_guard lock(m_mutex);
    return {{"examples", m_examples.size()}, {"trained_on", m_model ? m_model->examples : size_t{0}}};
}

void LocalForecaster::restoreState(const nlohmann::json& state) {
    if (!state.is_object())
        return;
    std::lock_guard lock(m_mutex);
    const size_t examples = state.value("examples", size_t{0});
    const size_t trained = state.value("trained_on", size_t{0});
    // Other examples than at the checkpoint: nothing to match, the next forecast retrains on what there is.
    if (examples != m_examples.size() || trained > examples)
        return;
    if (trained == 0) {
        m_model.reset();
    } else if (!m_model || m_model->examples != trained) {
        std::vector<LabelledExample> later(m_examples.begin() + static_cast<std::ptrdiff_t>(trained), m_examples.end());
        m_examples.resize(trained);
        try {
            retrainLocked();
        } catch (...) {
            m_examples.insert(m_examples.end(), later.begin(), later.end());
            throw;
        }
        m_examples.insert(m_examples.end(), later.begin(), later.end());
    }
    m_pending = examples - trained;
}

void LocalForecaster::retrain() {
    std::lock_guard lock(m_mutex);
    retrainLocked();
}

size_t LocalForecaster::exampleCount() const {
    std::lock_guard lock(m_mutex);
    return m_examples.size();
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
    return m_model
        ? std::sqrt(
            0.5 * (m_model->pooled_rms[0] * m_model->pooled_rms[0] + m_model->pooled_rms[1] * m_model->pooled_rms[1]))
        : kPriorSigma;
}

std::vector<std::string> LocalForecaster::columns() const {
    std::lock_guard lock(m_mutex);
    if (!m_model)
        return {};
    std::vector<std::string> names = local_feature_names();
    names.push_back("pack.offset");
    names.push_back("pack.same_source");
    for (const auto& t : m_model->tunable_names)
        names.push_back("t:" + t);
    return names;
}

void LocalForecaster::retrainLocked() {
    m_pending = 0;
    if (m_examples.empty()) {
        m_model.reset();
        return;
    }
    const auto started = std::chrono::steady_clock::now();
    const size_t n = m_examples.size();
    auto model = std::make_unique<Model>();
    model->examples = n;

    std::set<std::string> tunable_names;
    std::vector<std::vector<double>> fixed(n);
    std::vector<double> y(n);
    std::vector<Model::SourceKey> source(n);
    for (size_t i = 0; i < n; ++i) {
        const ForecastQuery& q = m_examples[i].query;
        fixed[i] = local_features(q);
        y[i] = std::log(m_examples[i].speedup);
        source[i] = {q.pack, std::hash<std::string> {}(q.candidate_source)};
        for (const auto& [name, value] : q.tunables)
            tunable_names.insert(name);
        ++model->pack_examples[q.pack];
        ++model->sources[source[i]];
    }
    model->tunable_names.assign(tunable_names.begin(), tunable_names.end());
    const size_t cols = model->columns();

    // Folds: stratified by pack (a pack's examples, in seeded random order, are dealt round the folds), so every
    // member sees most of every pack. With a single example there is one member and no out-of-fold prediction.
    const int folds = static_cast<int>(std::min<size_t>(static_cast<size_t>(m_options.members), n));
    std::mt19937_64 rng(m_options.seed);
    std::vector<uint64_t> key(n);
    for (auto& k : key)
        k = rng();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t {0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const auto& pa = m_examples[a].query.pack;
        const auto& pb = m_examples[b].query.pack;
        return pa != pb ? pa < pb : (key[a] != key[b] ? key[a] < key[b] : a < b);
    });
    std::vector<int> fold(n);
    const uint64_t start = draw(rng, static_cast<uint64_t>(folds));
    for (size_t r = 0; r < n; ++r)
        fold[order[r]] = static_cast<int>((start + r) % static_cast<uint64_t>(folds));
    auto learns = [&](int k, size_t i) { return folds < 2 || fold[i] != k; };

    // Members: member k learns every fold but k; its predictions on fold k are the out-of-fold predictions.
    model->members.resize(static_cast<size_t>(folds));
    std::vector<double> oof(n, kNaN);
    std::vector<char> oof_novel(n, 0);
    std::vector<std::string> errors(static_cast<size_t>(folds));
    auto train_member = [&](int k) {
        try {
            Model::Member& member = model->members[static_cast<size_t>(k)];
            std::map<std::string, std::pair<double, int>> sums;
            for (size_t i = 0; i < n; ++i)
                if (learns(k, i)) {
                    auto& s = sums[source[i].first];
                    s.first += y[i];
                    ++s.second;
                    ++member.sources[source[i]];
                }
            for (const auto& [pack, s] : sums)
                member.offsets[pack] = s.first / (s.second + kOffsetShrink);

            std::vector<float> data, labels, held_rows;
            std::vector<size_t> held_out;
            for (size_t i = 0; i < n; ++i) {
                if (!learns(k, i)) {
                    const auto it = member.offsets.find(source[i].first);
                    const auto seen = member.sources.find(source[i]);
                    const int same = seen == member.sources.end() ? 0 : seen->second;
                    model->appendRow(held_rows, fixed[i], it == member.offsets.end() ? kNaN : it->second, same,
                                     m_examples[i].query.tunables);
                    held_out.push_back(i);
                    oof_novel[i] = same == 0;
                    continue;
                }
                const double offset = member.offsets.at(source[i].first);
                // The other examples with this source: what a query of the same program would see.
                model->appendRow(data, fixed[i], offset, member.sources.at(source[i]) - 1,
                                 m_examples[i].query.tunables);
                labels.push_back(static_cast<float>(y[i] - offset));
            }
            DMatrix train(data, labels.size(), cols);
            check(XGDMatrixSetFloatInfo(train.handle, "label", labels.data(), labels.size()), "setting labels");
            BoosterHandle handle = nullptr;
            check(XGBoosterCreate(&train.handle, 1, &handle), "creating a booster");
            member.booster.reset(handle);
            const double base = std::accumulate(labels.begin(), labels.end(), 0.0) / labels.size();
            const std::vector<std::pair<std::string, std::string>> params = {
                {"booster", "gbtree"},
                {"objective", "reg:squarederror"},
                {"tree_method", "hist"},
                {"nthread", "1"},
                {"verbosity", "0"},
                {"seed", std::to_string(m_options.seed * 1000003ULL + static_cast<uint64_t>(k) * 7919ULL)},
                {"base_score", std::to_string(base)},
                {"max_depth", std::to_string(m_options.max_depth)},
                {"eta", std::to_string(m_options.eta)},
                {"subsample", std::to_string(m_options.subsample)},
                {"colsample_bytree", std::to_string(m_options.colsample)},
                {"min_child_weight", std::to_string(m_options.min_child_weight)},
                {"lambda", std::to_string(m_options.lambda)},
            };
            for (const auto& [name, value] : params)
                check(XGBoosterSetParam(handle, name.c_str(), value.c_str()), name.c_str());
            for (int round = 0; round < m_options.rounds; ++round)
                check(XGBoosterUpdateOneIter(handle, round, train.handle), "boosting");
            if (!held_out.empty()) {
                const auto pred = predict_rows(member.booster, held_rows, held_out.size(), cols);
                for (size_t j = 0; j < held_out.size(); ++j) {
                    const auto it = member.offsets.find(source[held_out[j]].first);
                    oof[held_out[j]] = (it == member.offsets.end() ? 0.0 : it->second) + pred[j];
                }
            }
        } catch (const Error& e) {
            errors[static_cast<size_t>(k)] = e.what();
        }
    };
    const int workers = std::max(1, std::min(m_options.threads, folds));
    if (workers == 1) {
        for (int k = 0; k < folds; ++k)
            train_member(k);
    } else {
        std::vector<std::thread> pool;
        std::atomic<int> next {0};
        for (int w = 0; w < workers; ++w)
            pool.emplace_back([&] {
                for (int k = next++; k < folds; k = next++)
                    train_member(k);
            });
        for (auto& t : pool)
            t.join();
    }
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);

    // Residual scales from the out-of-fold predictions, per (pack, novel source) and pooled per novel source: a
    // program whose text the pack has never shown is harder to place than one more configuration of a family.
    std::map<std::pair<std::string, bool>, std::pair<double, int>> squares;
    double pooled[2] = {0, 0};
    int scored[2] = {0, 0};
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(oof[i]))
            continue;
        const double e2 = (y[i] - oof[i]) * (y[i] - oof[i]);
        const bool novel = oof_novel[i];
        auto& s = squares[{source[i].first, novel}];
        s.first += e2;
        ++s.second;
        pooled[novel] += e2;
        ++scored[novel];
    }
    const double all_rms
        = scored[0] + scored[1] > 0 ? std::sqrt((pooled[0] + pooled[1]) / (scored[0] + scored[1])) : kPriorSigma;
    for (int c = 0; c < 2; ++c) {
        // A class with few residuals leans on the overall RMS the same way a pack leans on its class.
        const double rms2 = (pooled[c] + kShrink * all_rms * all_rms) / (scored[c] + kShrink);
        model->pooled_rms[c] = std::max(std::sqrt(rms2), 1e-3);
    }
    for (const auto& [pack, count] : model->pack_examples)
        for (bool novel : {false, true}) {
            const auto it = squares.find({pack, novel});
            const double sum = it == squares.end() ? 0.0 : it->second.first;
            const int m = it == squares.end() ? 0 : it->second.second;
            const double pooled2 = model->pooled_rms[novel] * model->pooled_rms[novel];
            model->sigma[{pack, novel}] = std::sqrt((sum + kShrink * pooled2) / (m + kShrink));
        }
    {
        std::map<std::string, std::pair<double, int>> sums;
        for (size_t i = 0; i < n; ++i) {
            sums[source[i].first].first += y[i];
            ++sums[source[i].first].second;
        }
        std::vector<double> levels;
        for (const auto& [pack, s] : sums)
            levels.push_back(s.first / (s.second + kOffsetShrink));
        if (levels.size() >= 2) {
            const double mean = mean_of(levels);
            double var = 0;
            for (double v : levels)
                var += (v - mean) * (v - mean);
            model->offset_variance = var / static_cast<double>(levels.size());
        }
    }

    // Temperature: the scale of sigma that makes the out-of-fold forecasts' true bins most likely.
    std::vector<std::pair<double, double>> calib;  // (out-of-fold mu, base sigma)
    std::vector<int> true_bins;
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(oof[i])) {
            calib.emplace_back(oof[i], model->baseSigma(source[i].first, oof_novel[i]));
            true_bins.push_back(m_options.scheme.binOf(m_examples[i].speedup));
        }
    if (calib.size() >= 2) {
        auto nll = [&](double tau) {
            double total = 0;
            for (size_t j = 0; j < calib.size(); ++j) {
                const auto p = speedup_bins(calib[j].first, tau * calib[j].second, m_options.scheme, kFloor);
                total -= std::log(p[static_cast<size_t>(true_bins[j] - 1)]);
            }
            return total;
        };
        double best_tau = 1.0, best = nll(1.0);
        for (int g = 0; g <= 80; ++g) {
            const double tau = std::exp(std::log(0.25) + g * (std::log(4.0) - std::log(0.25)) / 80.0);
            const double v = nll(tau);
            if (v < best) {
                best = v;
                best_tau = tau;
            }
        }
        model->tau = best_tau;
    }

    m_model = std::move(model);
    m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

LocalForecaster::Prediction LocalForecaster::predict(const ForecastQuery& query) {
    std::lock_guard lock(m_mutex);
    if (m_pending >= std::max<size_t>(1, m_options.retrain_after) || (!m_model && !m_examples.empty()))
        retrainLocked();
    return predictLocked(query);
}

LocalForecaster::Prediction LocalForecaster::predictLocked(const ForecastQuery& query) const {
    Prediction p;
    if (!m_model) {
        p.log_speedup = log_or_nan(query.parent_speedup);
        if (!std::isfinite(p.log_speedup))
            p.log_speedup = 0;
        return p;
    }
    const Model& model = *m_model;
    const auto fixed = local_features(query);
    const Model::SourceKey key {query.pack, std::hash<std::string> {}(query.candidate_source)};
    std::vector<double> preds;
    for (const auto& member : model.members) {
        const auto offset = member.offsets.find(query.pack);
        const auto seen = member.sources.find(key);
        std::vector<float> row;
        model.appendRow(row, fixed, offset == member.offsets.end() ? kNaN : offset->second,
                        seen == member.sources.end() ? 0 : seen->second, query.tunables);
        const auto out = predict_rows(member.booster, row, 1, model.columns());
        preds.push_back((offset == member.offsets.end() ? 0.0 : offset->second) + out.at(0));
    }
    p.prior = false;
    p.log_speedup = mean_of(preds);
    double var = 0;
    for (double v : preds)
        var += (v - p.log_speedup) * (v - p.log_speedup);
    p.spread = std::sqrt(var / static_cast<double>(preds.size()));
    const auto count = model.pack_examples.find(query.pack);
    p.pack_examples = count == model.pack_examples.end() ? 0 : count->second;
    const double base = model.baseSigma(query.pack, !model.sources.count(key));
    p.sigma = model.tau * base;
    return p;
}

std::vector<ForecastResult> LocalForecaster::forecast(const std::vector<ForecastQuery>& queries) {
    std::vector<ForecastResult> results(queries.size());
    std::lock_guard lock(m_mutex);
    try {
        if (m_pending >= std::max<size_t>(1, m_options.retrain_after) || (!m_model && !m_examples.empty()))
            retrainLocked();
    } catch (const Error& e) {
        for (auto& r : results)
            r.error = std::string("local-xgb: retraining failed: ") + e.what();
        return results;
    }
    for (size_t i = 0; i < queries.size(); ++i) {
        const auto started = std::chrono::steady_clock::now();
        try {
            const Prediction p = predictLocked(queries[i]);
            Forecast f = Forecast::fromRaw(speedup_bins(p.log_speedup, p.sigma, m_options.scheme, kFloor));
            f.surrogate_id = id();
            f.scheme_id = m_options.scheme.id();
            // The Gaussian itself, so that gating can compare candidates beyond the last bin edge.
            f.log_mean = p.log_speedup;
            f.log_sigma = p.sigma;
            char text[320];
            if (p.prior)
                std::snprintf(text, sizeof text,
                              "local-xgb has no examples yet: a wide prior around %.2fx (log-speedup %.2f, sigma %.2f)",
                              std::exp(p.log_speedup), p.log_speedup, p.sigma);
            else
                std::snprintf(text, sizeof text,
                              "local-xgb predicts %.2fx (log-speedup %.2f, sigma %.2f, member spread %.2f) from %zu "
                              "examples, %d of pack '%s'",
                              std::exp(p.log_speedup), p.log_speedup, p.sigma, p.spread, m_model->examples,
                              p.pack_examples, queries[i].pack.c_str());
            f.reasoning = text;
            f.latency_ms
                = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
            results[i].forecast = std::move(f);
        } catch (const std::exception& e) {
            results[i].error = std::string("local-xgb: ") + e.what();
        }
    }
    return results;
}

}  // namespace kerncast
