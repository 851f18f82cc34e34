#include "engine/replay/kernel_tuner_interop.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "core/t4_results.h"
#include "engine/gpu/statistics.h"
#include "engine/replay/recorder.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

namespace kerncast {

namespace {

constexpr const char* kOwnHeader = "kerncast";
constexpr const char* kStatusField = "kerncast_status";

std::vector<int64_t> values_in_order(const KernelProgram& family, const Bindings& tunables) {
    std::vector<int64_t> v;
    for (const auto& t : family.tunables) {
        const auto it = tunables.find(t.name);
        v.push_back(it == tunables.end() ? 0 : it->second);
    }
    return v;
}

std::string kernel_tuner_error_name(Status s) {
    return s == Status::CompileError ? "CompilationFailedConfig" : "RuntimeFailedConfig";
}

bool is_family_entry(const RecordingEntry& e, const KernelProgram& family) {
    return !e.tunables.empty() && e.source_hash == content_hash(family.source, e.tunables);
}

const RecordingEntry* reference_entry(const Recording& r) {
    for (const auto& e : r.entries)
        if (e.label == "reference")
            return &e;
    return nullptr;
}

double median_of(std::vector<double> v) {
    if (v.empty())
        return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (v.size() % 2)
        return upper;
    return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

// When the file last changed, in Kernel Tuner's timestamp form; now when it cannot be read.
std::string file_timestamp(const std::string& path) {
    struct stat st {};
    if (!path.empty() && ::stat(path.c_str(), &st) == 0)
        return kernel_tuner_timestamp(static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9);
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return kernel_tuner_timestamp(std::chrono::duration<double>(now).count());
}

// The bootstrap's generator, as stats::bootstrap_median_ci draws with it (splitmix64).
uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// x % d without a division (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019): exact for every
// 64-bit x and d, with m = fastmod_multiplier(d).
__uint128_t fastmod_multiplier(uint64_t d) { return ~__uint128_t{0} / d + 1; }
uint64_t fastmod(uint64_t x, __uint128_t m, uint64_t d) {
    const __uint128_t low = m * x;
    const __uint128_t bottom = ((low & ~uint64_t{0}) * d) >> 64;
    const __uint128_t top = (low >> 64) * d;
    return static_cast<uint64_t>((bottom + top) >> 64);
}

// percentile_sorted(sorted(v), p) of stats, by selection instead of a full sort (v is reordered).
double percentile_by_selection(std::vector<double>& v, double p) {
    if (v.empty())
        return 0;
    const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(rank));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = rank - static_cast<double>(lo);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
    const double at_lo = v[lo];
    const double at_hi = hi == lo ? at_lo : *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(hi), v.end());
    return at_lo + (at_hi - at_lo) * frac;
}

// stats::bootstrap_median_ci with its defaults (0.95, 2000 resamples, its seed), draw for draw, but each resample's
// median found by counting ranks in the sorted samples instead of sorting the resample.
stats::Interval bootstrap_median_ci_by_ranks(const std::vector<double>& samples) {
    constexpr int kResamples = 2000;
    constexpr uint64_t kSeed = 0x6b65726e63617374ULL;
    const size_t n = samples.size();
    if (n == 0)
        return {};
    if (n == 1)
        return {samples[0], samples[0]};
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a] < samples[b]; });
    std::vector<double> sorted(n);
    std::vector<uint32_t> rank(n);
    for (size_t r = 0; r < n; ++r) {
        sorted[r] = samples[order[r]];
        rank[order[r]] = static_cast<uint32_t>(r);
    }
    // percentile_sorted(draw, 50): the draw's order statistics lo and lo + 1, interpolated.
    const double at = std::clamp(50.0, 0.0, 100.0) / 100.0 * static_cast<double>(n - 1);
    const auto lo = static_cast<size_t>(std::floor(at));
    const size_t hi = std::min(lo + 1, n - 1);
    const double frac = at - static_cast<double>(lo);
    std::vector<uint32_t> count(n);
    std::vector<double> medians;
    medians.reserve(kResamples);
    uint64_t state = kSeed;
    const __uint128_t m = fastmod_multiplier(n);
    for (int r = 0; r < kResamples; ++r) {
        std::fill(count.begin(), count.end(), 0u);
        for (size_t i = 0; i < n; ++i)
            ++count[rank[fastmod(splitmix64(state), m, n)]];
        double v_lo = 0, v_hi = 0;
        size_t seen = 0;
        for (size_t k = 0; k < n; ++k) {
            const size_t next = seen + count[k];
            if (seen <= lo && lo < next)
                v_lo = sorted[k];
            if (seen <= hi && hi < next) {
                v_hi = sorted[k];
                break;
            }
            seen = next;
        }
        medians.push_back(v_lo + (v_hi - v_lo) * frac);
    }
    const double tail = (1.0 - 0.95) / 2.0 * 100.0;  // as bootstrap_median_ci works it out, to the last bit
    const double low = percentile_by_selection(medians, tail);
    return {low, percentile_by_selection(medians, 100.0 - tail)};
}

TimingStats stats_from_ms(const KernelTunerEntry& e) {
    std::vector<double> us;
    for (double t : e.times_ms)
        us.push_back(t * 1000.0);
    if (us.empty())
        us.push_back(*e.time_ms * 1000.0);
    TimingStats s = summarize_recorded_runs(us);
    // The cache's objective is the time Kernel Tuner compared; it wins over a statistic of the samples.
    s.median_us = *e.time_ms * 1000.0;
    return s;
}

// Every configuration's statistics, worked out on all cores (a hub cache has 11,000 configurations of 32 runs each,
// and the bootstrap of each median is most of an import's time).
std::vector<std::optional<TimingStats>> stats_of_entries(const KernelTunerCache& cache) {
    std::vector<std::optional<TimingStats>> out(cache.entries.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i; (i = next.fetch_add(64)) < out.size();)
            for (size_t j = i; j < std::min(i + 64, out.size()); ++j)
                if (cache.entries[j].time_ms)
                    out[j] = stats_from_ms(cache.entries[j]);
    };
    const size_t threads =
        std::clamp<size_t>(std::thread::hardware_concurrency(), 1, std::max<size_t>(1, out.size() / 256));
    std::vector<std::thread> pool;
    for (size_t t = 1; t < std::min<size_t>(threads, 32); ++t)
        pool.emplace_back(work);
    work();
    for (auto& t : pool)
        t.join();
    return out;
}

}  // namespace

TimingStats summarize_recorded_runs(const std::vector<double>& samples_us) {
    TimingStats t;
    t.samples_us = samples_us;
    t.n = static_cast<int>(samples_us.size());
    if (samples_us.empty())
        return t;
    t.median_us = stats::median(samples_us);
    t.mean_us = stats::mean(samples_us);
    t.p10_us = stats::percentile(samples_us, 10);
    t.p90_us = stats::percentile(samples_us, 90);
    const stats::Interval ci = bootstrap_median_ci_by_ranks(samples_us);
    t.ci_low_us = ci.low;
    t.ci_high_us = ci.high;
    const double rse = stats::rel_std_error(samples_us);
    t.rel_std_error = std::isfinite(rse) ? rse : 0;
    t.events_median_us = 0;
    return t;
}

std::vector<int64_t> problem_size_in_declared_order(const Problem& problem) {
    std::vector<int64_t> sizes;
    try {
        const auto doc = nlohmann::ordered_json::parse(problem.json_text);
        for (const auto& [name, value] : doc.at("sizes").at("benchmark").items())
            sizes.push_back(problem.benchmark.at(name));
    } catch (const std::exception&) {
        sizes.clear();
        for (const auto& [name, value] : problem.benchmark)
            sizes.push_back(value);
    }
    return sizes;
}

KernelTunerCache kernel_tuner_cache_header(const Problem& problem, const KernelProgram& family,
                                           const std::string& device_name) {
    if (family.tunables.empty())
        throw Error(SourceLocation{family.file, 0}, "the family declares no tunable: a Kernel Tuner cache needs one");
    KernelTunerCache c;
    c.device_name = device_name;
    const auto kernels = family.kernelNames();
    c.kernel_name = kernels.empty() ? problem.name : kernels.front();
    c.problem_size = problem_size_in_declared_order(problem);
    for (const auto& t : family.tunables) {
        c.keys.push_back(t.name);
        c.values.push_back(t.values);
    }
    c.objective = "time";
    return c;
}

KernelTunerEntry kernel_tuner_entry(const KernelProgram& family, const Bindings& tunables, const Measurement& m,
                                    const std::string& timestamp) {
    KernelTunerEntry e;
    e.values = values_in_order(family, tunables);
    if (m.status == Status::Ok && m.candidate) {
        e.time_ms = m.candidate->median_us / 1000.0;
        for (double t : m.candidate->samples_us)
            e.times_ms.push_back(t / 1000.0);
    } else {
        e.error = kernel_tuner_error_name(m.status);
    }
    e.compile_time_ms = m.compile_ms;
    e.verification_time_ms = m.verify_ms;
    e.benchmark_time_ms = m.time_ms;
    e.strategy_time_ms = 0;   // no search strategy runs between Kerncast's measurements of one configuration
    e.framework_time_ms = 0;  // Kerncast's own overhead is not measured per configuration
    e.timestamp = timestamp;
    e.extra[kStatusField] = to_string(m.status);
    return e;
}

KernelTunerCache kernel_tuner_cache_from_recording(const Recording& recording, const Problem& problem,
                                                   const KernelProgram& family) {
    KernelTunerCache c = kernel_tuner_cache_header(problem, family, recording.header.device.name);
    nlohmann::ordered_json own;
    own["problem"] = problem.name;
    if (const RecordingEntry* ref = reference_entry(recording); ref && ref->measurement.candidate)
        own["reference_time"] = ref->measurement.candidate->median_us / 1000.0;
    if (recording.header.pytorch_eager_us)
        own["pytorch_eager_time"] = *recording.header.pytorch_eager_us / 1000.0;
    own["device"] = nlohmann::ordered_json::parse(nlohmann::json(recording.header.device).dump());
    own["ceilings"] = nlohmann::ordered_json::parse(nlohmann::json(recording.header.ceilings).dump());
    c.extra[kOwnHeader] = own;
    const std::string timestamp = file_timestamp(recording.file);
    for (const auto& e : recording.entries) {
        if (!is_family_entry(e, family) || e.measurement.status == Status::NotRecorded)
            continue;
        c.entries.push_back(kernel_tuner_entry(family, e.tunables, e.measurement, timestamp));
    }
    if (c.entries.empty())
        throw Error(SourceLocation{recording.file, 0},
                    "the recording holds no configuration of " + family.file + "'s family");
    return c;
}

KernelTunerImport recording_from_kernel_tuner_cache(const KernelTunerCache& cache, const std::string& cache_file,
                                                    const ProblemBundle& bundle, std::optional<double> reference_ms) {
    if (!bundle.family)
        throw Error(SourceLocation{bundle.problem.dir, 0}, "the problem has no family.cu: a Kernel Tuner cache holds "
                                                           "configurations of a family's tunables");
    const Problem& problem = bundle.problem;
    const KernelProgram& family = *bundle.family;
    const SourceLocation top{cache_file, 1};
    const KernelTunerCache want = kernel_tuner_cache_header(problem, family, cache.device_name);
    if (!cache.kernel_name.empty() && cache.kernel_name != want.kernel_name)
        throw Error(top, "the cache is for kernel \"" + cache.kernel_name + "\"; " + family.file + " launches \"" +
                             want.kernel_name + "\"");
    if (!cache.problem_size.empty() && cache.problem_size != want.problem_size) {
        auto list = [](const std::vector<int64_t>& v) {
            std::string s;
            for (auto x : v)
                s += (s.empty() ? "" : ", ") + std::to_string(x);
            return "[" + s + "]";
        };
        throw Error(top, "the cache's problem_size " + list(cache.problem_size) + " is not " + problem.name +
                             "'s benchmark case " + list(want.problem_size) +
                             " (sizes in problem.json order): its times are for other sizes");
    }
    {
        auto a = cache.keys, b = want.keys;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        if (a != b) {
            std::string have, need;
            for (const auto& k : cache.keys)
                have += (have.empty() ? "" : ", ") + k;
            for (const auto& k : want.keys)
                need += (need.empty() ? "" : ", ") + k;
            throw Error(top, "the cache tunes " + have + "; the family's tunables are " + need);
        }
    }
    KernelTunerImport out;
    const auto own = cache.extra.find(kOwnHeader);
    const KernelTunerEntry* reference_config = nullptr;  // the cache's entry that is the reference, if any
    if (reference_ms) {
        out.reference = "given";
    } else if (own != cache.extra.end() && own->contains("reference_time") && (*own)["reference_time"].is_number()) {
        reference_ms = (*own)["reference_time"].get<double>();
        out.reference = "the cache's \"kerncast\" header";
    } else if (!problem.reference_configuration.empty()) {
        // A T1-imported problem's reference is the family at the T1 defaults: its time is that entry's.
        const Bindings& rc = problem.reference_configuration;
        for (const auto& [name, value] : rc)
            if (std::find(cache.keys.begin(), cache.keys.end(), name) == cache.keys.end())
                throw Error(SourceLocation{problem.file, 0}, "reference_configuration names " + name +
                                                                 ", which the cache " + cache_file + " does not tune");
        std::vector<int64_t> values;
        for (const auto& key : cache.keys) {
            const auto it = rc.find(key);
            if (it == rc.end())
                throw Error(SourceLocation{problem.file, 0},
                            "reference_configuration gives no value for tunable " + key +
                                ": the reference's time is the cache's entry for that configuration");
            values.push_back(it->second);
        }
        const std::string which = describe_configuration(cache.keys, values);
        reference_config = cache.find(values);
        if (!reference_config)
            throw Error(top, "the cache has no entry for " + problem.name + "'s reference configuration (" + which +
                                 ", problem.json's reference_configuration), whose time is the reference's: give "
                                 "the reference kernel's time with --reference-ms");
        if (!reference_config->time_ms)
            throw Error(SourceLocation{cache_file, reference_config->line},
                        "the reference configuration (" + which +
                            ", problem.json's reference_configuration) "
                            "failed in the cache (" +
                            reference_config->error +
                            "): there is no reference time; give the reference kernel's time with --reference-ms");
        reference_ms = *reference_config->time_ms;
        out.reference = "the cache's entry for the reference configuration " + which;
    }
    if (!reference_ms || !(*reference_ms > 0))
        throw Error(top, "the cache holds no reference time (a Kernel Tuner cache times only the tuned kernel) and "
                         "problem.json has no reference_configuration: give the reference kernel's time on " +
                             cache.device_name + " in milliseconds");
    out.reference_ms = *reference_ms;

    Recording& r = out.recording;
    r.file = cache_file;
    r.header.problem = problem.name;
    // The import is checked against this folder's kernel, sizes and tunables, so it replays for this definition.
    r.header.problem_fingerprint = problem_fingerprint(problem.dir);
    r.header.device.name = cache.device_name;
    if (own != cache.extra.end()) {
        try {
            if (own->contains("device"))
                r.header.device = nlohmann::json::parse((*own)["device"].dump()).get<DeviceFingerprint>();
            if (own->contains("ceilings"))
                r.header.ceilings = nlohmann::json::parse((*own)["ceilings"].dump()).get<DeviceCeilings>();
            if (own->contains("pytorch_eager_time") && (*own)["pytorch_eager_time"].is_number())
                r.header.pytorch_eager_us = (*own)["pytorch_eager_time"].get<double>() * 1000.0;
        } catch (const nlohmann::json::exception& e) {
            throw Error(top, std::string("bad \"kerncast\" header field: ") + e.what());
        }
    }

    const TimingStats ref_stats =
        reference_config ? stats_from_ms(*reference_config) : stats::summarize({*reference_ms * 1000.0});
    RecordingEntry ref;
    ref.label = "reference";
    ref.source_hash = content_hash(bundle.reference.source, {});
    ref.measurement.status = Status::Ok;
    if (reference_config) {
        ref.measurement.compile_ms = reference_config->compile_time_ms;
        ref.measurement.verify_ms = reference_config->verification_time_ms;
        ref.measurement.time_ms = reference_config->benchmark_time_ms;
    }
    ref.measurement.candidate = ref_stats;
    ref.measurement.reference = ref_stats;
    ref.measurement.speedup = 1.0;
    ref.measurement.device = r.header.device;
    ref.measurement.device_kind = "kernel-tuner";
    r.entries.push_back(ref);

    std::vector<double> compile_ms, benchmark_ms;
    compile_ms.reserve(cache.entries.size());
    benchmark_ms.reserve(cache.entries.size());
    std::vector<std::optional<TimingStats>> entry_stats = stats_of_entries(cache);
    r.entries.reserve(cache.entries.size() + 1);
    for (size_t index = 0; index < cache.entries.size(); ++index) {
        const KernelTunerEntry& ke = cache.entries[index];
        const SourceLocation at{cache_file, ke.line};
        Bindings tunables;
        for (size_t k = 0; k < cache.keys.size(); ++k)
            tunables[cache.keys[k]] = ke.values[k];
        if (!family.isValid(tunables))
            throw Error(at, "configuration \"" + ke.key() + "\" (" + describe_configuration(cache.keys, ke.values) +
                                ") is not a valid configuration of " + family.file + ": " +
                                why_configuration_is_invalid(family, tunables));
        compile_ms.push_back(ke.compile_time_ms);
        benchmark_ms.push_back(ke.benchmark_time_ms);
        RecordingEntry e;
        e.label = family_label(family, tunables);
        e.tunables = tunables;
        e.source_hash = content_hash(family.source, tunables);
        Measurement& m = e.measurement;
        m.device = r.header.device;
        m.device_kind = "kernel-tuner";
        m.compile_ms = ke.compile_time_ms;
        m.verify_ms = ke.verification_time_ms;
        m.time_ms = ke.benchmark_time_ms;
        m.reference = ref_stats;
        if (ke.time_ms) {
            m.status = Status::Ok;
            const double median_us = entry_stats[index] ? entry_stats[index]->median_us : 0;
            m.candidate = std::move(entry_stats[index]);
            m.speedup = median_us > 0 ? ref_stats.median_us / median_us : 0;
            if (!(m.speedup > 0))
                throw Error(at, "configuration \"" + ke.key() + "\" has a time of 0 ms");
        } else {
            m.status = ke.error == "CompilationFailedConfig" ? Status::CompileError : Status::LaunchError;
            if (const auto s = ke.extra.find(kStatusField); s != ke.extra.end() && s->is_string())
                m.status = status_from_string(s->get<std::string>());
            m.reason = "Kernel Tuner recorded " + ke.error;
            ++out.failed;
            if (m.status == Status::CompileError)
                ++out.compile_failed;
        }
        r.entries.push_back(std::move(e));
        ++out.configurations;
    }
    out.median_compile_ms = median_of(compile_ms);
    out.median_benchmark_ms = median_of(benchmark_ms);
    out.total_compile_ms = std::accumulate(compile_ms.begin(), compile_ms.end(), 0.0);
    out.total_benchmark_ms = std::accumulate(benchmark_ms.begin(), benchmark_ms.end(), 0.0);
    return out;
}

std::string why_configuration_is_invalid(const KernelProgram& family, const Bindings& tunables) {
    for (const auto& t : family.tunables) {
        const auto it = tunables.find(t.name);
        if (it == tunables.end())
            return "it gives no value for tunable " + t.name;
        if (std::find(t.values.begin(), t.values.end(), it->second) == t.values.end())
            return t.name + " = " + std::to_string(it->second) + " is not among the values " + family.file + ":" +
                   std::to_string(t.line) + " declares";
    }
    for (const auto& [name, value] : tunables)
        if (!family.tunable(name))
            return name + " is not a tunable of " + family.file;
    for (const auto& t : family.tunables) {
        if (t.where.empty())
            continue;
        const std::string condition = "the condition `where " + t.where.text() + "` of tunable " + t.name + " (" +
                                      family.file + ":" + std::to_string(t.line) + ")";
        try {
            if (t.where.eval(tunables) == 0)
                return condition + " does not hold";
        } catch (const Error& e) {
            return condition + " cannot be evaluated for it (" + e.what() + ")";
        }
    }
    return {};
}

std::string recording_jsonl(const Recording& recording) {
    std::string text = recording_header_json(recording.header).dump() + "\n";
    for (const auto& e : recording.entries)
        text += recording_entry_json(e).dump() + "\n";
    return text;
}

}  // namespace kerncast
