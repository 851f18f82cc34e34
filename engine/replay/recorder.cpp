#include "engine/replay/recorder.h"

#include <algorithm>

#include "core/candidate.h"
#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "core/problem_library.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

ProgramRef program_ref(const KernelProgram& k, const Bindings& tunables = {}) {
    ProgramRef p;
    p.source = k.source;
    p.file_name = fs::path(k.file).filename().string();
    p.tunables = tunables;
    return p;
}

// The lines already recorded in an interrupted recording, after cutting off a last line that a crash left
// half-written. Throws when the file belongs to another device or problem.
bool same_model(const DeviceFingerprint& a, const DeviceFingerprint& b) {
    return a.name == b.name && a.cc_major == b.cc_major && a.cc_minor == b.cc_minor && a.sm_count == b.sm_count &&
           a.memory_bytes == b.memory_bytes;
}

// "700 W", or "699.8 W" where the limit is not whole watts: every milliwatt up to 9999 W shows, so two limits
// never print alike.
std::string watts(int mw) {
    char text[32];
    std::snprintf(text, sizeof text, "%.7g W", mw / 1000.0);
    return text;
}

// How the GPU going on with a recording is set up differently from the one it was started on, in what makes
// compute-bound programs run faster or slower: the board power limit in force (an administrator may cap one GPU of
// a node, or this one between two leases). Empty when they agree, or when the header does not know its limit (a
// recording started before headers carried it). A GPU that cannot tell its own (no NVML) does not go on with a
// recording that knows one. Rated clocks are the model's, which same_model compares by name, SMs and memory.
std::string setting_difference(const DeviceFingerprint& was, const DeviceFingerprint& now) {
    if (was.power_limit_mw <= 0 || was.power_limit_mw == now.power_limit_mw)
        return "";
    if (now.power_limit_mw <= 0)
        return "was started with the GPU's power limit at " + watts(was.power_limit_mw) +
               ", which this GPU's driver does not report (NVML)";
    return "was started with the GPU's power limit at " + watts(was.power_limit_mw) + ", this GPU's is " +
           watts(now.power_limit_mw);
}

std::set<std::string> resume_existing(const fs::path& file, const RecordingHeader& header, bool another_gpu_ok) {
    std::set<std::string> done;
    if (!fs::exists(file))
        return done;
    std::string text;
    {
        std::ifstream in(file, std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        text = ss.str();
    }
    if (!text.empty() && text.back() != '\n') {
        const auto cut = text.rfind('\n');
        text.resize(cut == std::string::npos ? 0 : cut + 1);
        fs::resize_file(file, text.size());
    }
    if (text.empty())
        return done;
    const Recording existing = Recording::parse(text, file.string());
    if (existing.header.problem != header.problem)
        throw Error(SourceLocation{file.string(), 1}, "this recording was made for problem '" +
                                                          existing.header.problem + "', not '" + header.problem +
                                                          "'; move it away or record into another folder (--out)");
    if (existing.header.device.uuid != header.device.uuid) {
        if (!same_model(existing.header.device, header.device))
            throw Error(SourceLocation{file.string(), 1}, "this recording was made on " + existing.header.device.name +
                                                              " " + existing.header.device.uuid +
                                                              ", another GPU model than this " + header.device.name +
                                                              "; move it away or record into another folder (--out)");
        if (!another_gpu_ok)
            throw Error(SourceLocation{file.string(), 1},
                        "this recording was started on another " + header.device.name + " (" +
                            existing.header.device.uuid + ", this one is " + header.device.uuid +
                            "); pass --continue-on-another-gpu to go on with it here (each entry keeps the GPU "
                            "that measured it), or record into another folder (--out)");
    }
    if (const std::string diff = setting_difference(existing.header.device, header.device); !diff.empty())
        throw Error(SourceLocation{file.string(), 1},
                    "this recording " + diff +
                        "; its timings would not compare with those already recorded (compute-bound programs "
                        "run slower under a lower limit); set the limit as it was (nvidia-smi -pl) or record into "
                        "another folder (--out)");
    if (existing.header.problem_fingerprint != header.problem_fingerprint)
        throw Error(SourceLocation{file.string(), 1},
                    "this recording measured another definition of problem '" + header.problem +
                        "' (problem.json or its reference changed since); move it away or record into another "
                        "folder (--out)");
    for (const auto& e : existing.entries)
        done.insert(e.source_hash);
    return done;
}

}  // namespace

std::string family_label(const KernelProgram& family, const Bindings& config) {
    // Declared order, as a person reads the file ("BLOCK=256 VEC=4"), not the map's alphabetical one.
    std::string label = "family";
    for (const auto& t : family.tunables)
        if (auto it = config.find(t.name); it != config.end())
            label += " " + t.name + "=" + std::to_string(it->second);
    return label;
}

std::vector<size_t> spread_order(size_t n) {
    size_t bits = 0;
    while ((size_t{1} << bits) < n)
        ++bits;
    std::vector<std::pair<size_t, size_t>> keyed;  // (bit-reversed position, position)
    for (size_t i = 0; i < n; ++i) {
        size_t reversed = 0;
        for (size_t b = 0; b < bits; ++b)
            if ((i >> b) & 1)
                reversed |= size_t{1} << (bits - 1 - b);
        keyed.emplace_back(reversed, i);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<size_t> order;
    for (const auto& k : keyed)
        order.push_back(k.second);
    return order;
}

std::vector<RecordItem> recording_plan(const std::string& problem_dir, size_t limit) {
    const ProblemBundle bundle = load_problem_folder(problem_dir);
    std::vector<RecordItem> items;
    items.push_back({"reference", program_ref(bundle.reference)});
    for (const auto& seed : bundle.seeds)
        items.push_back({"seed:" + fs::path(seed.file).filename().string(), program_ref(seed)});
    if (bundle.family) {
        // A limit samples the space evenly (first and last included) rather than taking its first corner, where
        // only the slowest-varying tunable would ever change; and the sample is recorded in an order whose every
        // prefix is spread over it too, so that a recording stopped early (a slow reference, a machine taken back)
        // is a sample of the space and not of its first tunable's first value.
        const auto configs = bundle.family->configurations();
        const size_t take = limit == 0 ? configs.size() : std::min(limit, configs.size());
        for (size_t k : spread_order(take)) {
            const size_t index = take == 1 ? 0 : k * (configs.size() - 1) / (take - 1);
            items.push_back(
                {family_label(*bundle.family, configs[index]), program_ref(*bundle.family, configs[index])});
        }
    }
    return items;
}

RecordSummary record_problem(Device& device, const std::string& problem_dir, const RecordOptions& options,
                             const std::function<void(const RecordProgress&)>& progress) {
    if (!device.recordingsFolder().empty())
        throw Error("a recording is measured on a GPU (--device cuda:N); " + device.id() +
                    " only answers from recordings already made and would record nothing but not_recorded entries");
    const ProblemBundle bundle = load_problem_folder(problem_dir);
    const auto items = recording_plan(problem_dir, options.limit);

    RecordingHeader header;
    header.problem = bundle.problem.name;
    header.problem_fingerprint = problem_fingerprint(problem_dir);
    header.device = device.fingerprint();
    header.ceilings = options.ceilings;
    header.pytorch_eager_us = options.pytorch_eager_us;

    const fs::path dir = fs::path(options.out_dir) / header.device.slug();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw Error("cannot create the recording folder " + dir.string() + ": " + ec.message());
    RecordSummary summary;
    summary.file = (dir / (header.problem + ".jsonl")).string();

    const auto done = resume_existing(summary.file, header, options.continue_on_another_gpu);
    std::ofstream out(summary.file, std::ios::app | std::ios::binary);
    if (!out)
        throw Error(SourceLocation{summary.file, 0}, "cannot open the recording for writing");
    if (done.empty() && fs::file_size(summary.file, ec) == 0) {
        out << recording_header_json(header).dump() << '\n';
        out.flush();
    }

    const ProgramRef reference = items.front().program;
    auto request_for = [&](const RecordItem& item) {
        MeasureRequest req;
        req.problem_dir = problem_dir;
        req.candidate = item.program;
        req.reference = reference;
        req.options = options.measure;
        return req;
    };
    // Every measurement is prepared up front: on a GPU that queues the compiles on the pool, so that NVRTC works
    // while the GPU measures.
    std::vector<std::function<MeasureOutcome()>> prepared(items.size());
    for (size_t i = 0; i < items.size(); ++i)
        if (!done.count(content_hash(items[i].program.source, items[i].program.tunables)))
            prepared[i] = device.prepareMeasure(request_for(items[i]));
    for (size_t i = 0; i < items.size(); ++i) {
        const auto& item = items[i];
        RecordProgress p;
        p.index = i + 1;
        p.total = items.size();
        p.label = item.label;
        const std::string hash = content_hash(item.program.source, item.program.tunables);
        if (done.count(hash)) {
            p.skipped = true;
            ++summary.skipped;
            if (progress)
                progress(p);
            continue;
        }
        const MeasureOutcome outcome = prepared[i]();
        prepared[i] = nullptr;

        RecordingEntry entry;
        entry.label = item.label;
        entry.source_hash = hash;
        entry.tunables = item.program.tunables;
        entry.static_report = outcome.static_report;
        entry.measurement = outcome.measurement;
        out << recording_entry_json(entry).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        out.flush();
        if (!out)
            throw Error(SourceLocation{summary.file, 0}, "writing the recording failed (disk full?)");

        ++summary.measured;
        if (is_failure(outcome.measurement.status))
            ++summary.failed;
        else if (outcome.measurement.status == Status::Ok)
            ++summary.ok;
        p.measurement = outcome.measurement;
        if (progress)
            progress(p);
    }
    return summary;
}

}  // namespace kerncast
