#include "engine/replay/kernel_tuner_interop.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "engine/gpu/statistics.h"
#include "engine/replay/recorder.h"

#include <algorithm>

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

TimingStats stats_from_ms(const KernelTunerEntry& e) {
    std::vector<double> us;
    for (double t : e.times_ms)
        us.push_back(t * 1000.0);
    if (us.empty())
        us.push_back(*e.time_ms * 1000.0);
    TimingStats s = stats::summarize(us);
    // The cache's objective is the time Kernel Tuner compared; it wins over a statistic of the samples.
    s.median_us = *e.time_ms * 1000.0;
    return s;
}

}  // namespace

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
    for (const auto& e : recording.entries) {
        if (!is_family_entry(e, family) || e.measurement.status == Status::NotRecorded)
            continue;
        c.entries.push_back(kernel_tuner_entry(family, e.tunables, e.measurement, ""));
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
    if (cache.kernel_name != want.kernel_name)
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
    const auto own = cache.extra.find(kOwnHeader);
    if (!reference_ms && own != cache.extra.end() && own->contains("reference_time") &&
        (*own)["reference_time"].is_number())
        reference_ms = (*own)["reference_time"].get<double>();
    if (!reference_ms || !(*reference_ms > 0))
        throw Error(top, "the cache holds no reference time (a Kernel Tuner cache times only the tuned kernel): "
                         "give the reference kernel's time on " +
                             cache.device_name + " in milliseconds");

    KernelTunerImport out;
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

    TimingStats ref_stats = stats::summarize({*reference_ms * 1000.0});
    RecordingEntry ref;
    ref.label = "reference";
    ref.source_hash = content_hash(bundle.reference.source, {});
    ref.measurement.status = Status::Ok;
    ref.measurement.candidate = ref_stats;
    ref.measurement.reference = ref_stats;
    ref.measurement.speedup = 1.0;
    ref.measurement.device = r.header.device;
    ref.measurement.device_kind = "kernel-tuner";
    r.entries.push_back(ref);

    for (const auto& ke : cache.entries) {
        const SourceLocation at{cache_file, ke.line};
        Bindings tunables;
        for (size_t k = 0; k < cache.keys.size(); ++k)
            tunables[cache.keys[k]] = ke.values[k];
        if (!family.isValid(tunables))
            throw Error(at, "configuration \"" + ke.key() + "\" is not a valid configuration of " + family.file +
                                " (a value not declared, or a `where` condition that fails)");
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
            m.candidate = stats_from_ms(ke);
            m.speedup = m.candidate->median_us > 0 ? ref_stats.median_us / m.candidate->median_us : 0;
            if (!(m.speedup > 0))
                throw Error(at, "configuration \"" + ke.key() + "\" has a time of 0 ms");
        } else {
            m.status = ke.error == "CompilationFailedConfig" ? Status::CompileError : Status::LaunchError;
            if (const auto s = ke.extra.find(kStatusField); s != ke.extra.end() && s->is_string())
                m.status = status_from_string(s->get<std::string>());
            m.reason = "Kernel Tuner recorded " + ke.error;
            ++out.failed;
        }
        r.entries.push_back(std::move(e));
        ++out.configurations;
    }
    return out;
}

std::string recording_jsonl(const Recording& recording) {
    std::string text = recording_header_json(recording.header).dump() + "\n";
    for (const auto& e : recording.entries)
        text += recording_entry_json(e).dump() + "\n";
    return text;
}

}  // namespace kerncast
