#include "engine/replay/recording_static.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/problem.h"
#include "core/problem_fingerprint.h"
#include "core/text_util.h"
#include "engine/gpu/compiler.h"
#include "engine/replay/recorder.h"
#include "engine/replay/replay_device.h"

#include <nlohmann/json.hpp>

#include <future>
#include <map>

namespace kerncast {

StaticRefresh refresh_static_reports(const std::string& path, const std::string& problem_dir, Compiler& compiler,
                                     bool dry_run) {
    const std::string text = read_text_file(path, "the recording");
    const Recording recording = Recording::parse(text, path);
    const auto items = recording_plan(problem_dir, 0);
    const std::string problem = Problem::load(problem_dir).name;
    if (recording.header.problem != problem)
        throw Error(SourceLocation{path, 1},
                    "this recording is of problem '" + recording.header.problem + "', not of '" + problem + "'");
    const std::string fingerprint = problem_fingerprint(problem_dir);
    if (recording.header.problem_fingerprint != fingerprint)
        throw Error(SourceLocation{path, 1},
                    "this recording measured another definition of problem '" + problem +
                        "' (its problem.json or reference changed since): its programs are not the folder's");
    const auto& device = recording.header.device;
    if (device.cc_major <= 0)
        throw Error(SourceLocation{path, 1}, "the header names no compute capability to compile for");

    StaticRefresh out;
    out.file = path;
    out.arch = "sm_" + std::to_string(device.cc_major) + std::to_string(device.cc_minor);

    std::map<std::string, const RecordItem*> byHash;
    for (const auto& item : items)
        byHash.emplace(content_hash(item.program.source, item.program.tunables), &item);

    // Every compile queued first, so that the compiler's pool works on all of them at once.
    struct Job {
        const RecordingEntry* entry;
        const RecordItem* item;
        std::shared_future<CompileResult> result;
    };
    std::vector<Job> jobs;
    for (const auto& e : recording.entries) {
        auto it = byHash.find(e.source_hash);
        if (it == byHash.end()) {
            ++out.other;
            continue;
        }
        if (e.static_report.empty()) {  // an imported cache (Kernel Tuner, T4) records none: nothing to put right
            ++out.without_report;
            continue;
        }
        jobs.push_back({&e, it->second, compiler.compileAsync(measure_compile_request(it->second->program, out.arch))});
    }

    std::vector<std::string> lines = split_lines(text);
    for (const auto& job : jobs) {
        const CompileResult& r = job.result.get();
        if (!r.ok) {
            ++out.not_compiled;
            const std::string why = r.diagnostics.empty() ? r.log : r.diagnostics.front().message;
            out.failures.push_back(job.item->label + ": " + why.substr(0, why.find('\n')));
            continue;
        }
        const auto& was = job.entry->static_report;
        if (nlohmann::json(r.kernels) == nlohmann::json(was)) {
            ++out.same;
            continue;
        }
        // ptxas's register allocation is not a pure function of the program (the same PTX compiled again in one
        // process sometimes comes back with other registers and spills), so a fresh compile describes the measured
        // cubin only where it allocated as the recorded one did. A report that the driver's cache answered has no
        // ptxas lines: no static shared memory, no spills, in every kernel.
        bool sameAllocation = was.size() == r.kernels.size(), cacheForm = true;
        for (size_t i = 0; i < was.size() && i < r.kernels.size(); ++i)
            sameAllocation = sameAllocation && was[i].kernel == r.kernels[i].kernel &&
                             was[i].registers == r.kernels[i].registers && was[i].barriers == r.kernels[i].barriers;
        for (const auto& k : was)
            cacheForm = cacheForm && k.shared_bytes == 0 && k.spill_store_bytes == 0 && k.spill_load_bytes == 0;
        std::vector<StaticReport> now = was;
        if (sameAllocation && cacheForm) {
            now = r.kernels;
        } else {
            // Static shared memory is the source's declarations, whatever the allocation: only it is put right.
            for (auto& k : now)
                for (const auto& fresh : r.kernels)
                    if (fresh.kernel == k.kernel && k.shared_bytes == 0 && fresh.shared_bytes > 0)
                        k.shared_bytes = fresh.shared_bytes;
        }
        if (nlohmann::json(now) == nlohmann::json(was)) {
            ++out.allocated_otherwise;
            std::string kept = job.item->label + ":";
            for (size_t i = 0; i < was.size() && i < r.kernels.size(); ++i)
                if (was[i].registers != r.kernels[i].registers ||
                    was[i].spill_store_bytes + was[i].spill_load_bytes !=
                        r.kernels[i].spill_store_bytes + r.kernels[i].spill_load_bytes)
                    kept += " " + was[i].kernel + " registers " + std::to_string(was[i].registers) + " (here " +
                            std::to_string(r.kernels[i].registers) + "), spills " +
                            std::to_string(was[i].spill_store_bytes + was[i].spill_load_bytes) + " B (here " +
                            std::to_string(r.kernels[i].spill_store_bytes + r.kernels[i].spill_load_bytes) + " B)";
            out.kept.push_back(kept);
            continue;
        }
        ++out.updated;
        std::string change = job.item->label + ":";
        for (size_t i = 0; i < was.size(); ++i) {
            const nlohmann::json ja = was[i], jb = now[i];
            std::string fields;
            for (const auto& [key, value] : jb.items())
                if (ja.value(key, nlohmann::json()) != value)
                    fields += " " + key + " " + ja.value(key, nlohmann::json()).dump() + " -> " + value.dump();
            if (!fields.empty())
                change += " " + now[i].kernel + fields;
            out.changed_shared += was[i].shared_bytes != now[i].shared_bytes;
            out.changed_spills += was[i].spill_store_bytes != now[i].spill_store_bytes ||
                                  was[i].spill_load_bytes != now[i].spill_load_bytes;
        }
        out.changes.push_back(change);
        auto& line = lines.at(static_cast<size_t>(job.entry->line - 1));
        nlohmann::json j = nlohmann::json::parse(line);
        j["static"] = now;
        line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    if (out.updated > 0 && !dry_run) {
        write_lines_atomically(path, lines);
    }
    return out;
}

}  // namespace kerncast
