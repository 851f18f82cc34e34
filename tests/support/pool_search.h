#pragma once
// Shared by the pool's tests (engine, ssh, slurm): a gated search on the replay device, and a digest of what its run
// store holds, so that a search measured by a pool can be compared with the same search measured by one worker.

#include "core/problem_library.h"
#include "core/run_store.h"
#include "engine/cli/cli.h"
#include "engine/search/search_runner.h"
#include "engine/worker/measurement_pool.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace kerncast::test {

inline SearchConfig pool_search_config(const std::string& problem, int64_t budget, uint64_t seed,
                                       GatingKind gating = GatingKind::Selective) {
    SearchConfig c;
    c.problem_dir = cli::resources_dir() + "/problems/" + problem;
    c.device = "replay:nvidia-h200";
    c.surrogate = "local";
    c.gating.kind = gating;
    c.budgets.measurements = budget;
    c.seed = seed;
    return c;
}

struct StoreDigest {
    std::string text;          // one line per candidate: hash, parent's hash, mutator, measurement (if any)
    int64_t measurements = 0;  // device measurements (compile errors found here aside)
    int64_t measured_twice = 0;
    std::map<std::string, int64_t> events;  // how many of each kind
    std::vector<std::string> workers;       // the worker each measurement names
};

// Everything a person would compare: which candidates, in which order, from which parent, measured how. The
// measurement's worker is left out (it differs by construction) and collected separately.
inline StoreDigest store_digest(const std::string& path) {
    RunStore store = RunStore::open(path);
    const int64_t run = store.runs().back().id;
    StoreDigest d;
    std::map<int64_t, std::string> hash_of;
    const auto candidates = store.candidates(run);
    for (const auto& c : candidates)
        hash_of[c.id] = c.source_hash;
    const auto measured = store.measurementsOfRun(run);
    std::ostringstream out;
    for (const auto& c : candidates) {
        out << c.source_hash << " parent=" << (c.parent_id ? hash_of[c.parent_id] : "-") << " gen=" << c.generation
            << " label=" << c.label;
        if (auto it = measured.find(c.id); it != measured.end()) {
            d.measured_twice += it->second.size() > 1;
            for (const auto& m : it->second) {
                nlohmann::json j = m.measurement;
                if (j.contains("worker")) {
                    d.workers.push_back(j["worker"].get<std::string>());
                    j.erase("worker");
                }
                if (m.measurement.device_kind != "compiler")
                    ++d.measurements;
                out << " measured=" << j.dump();
            }
        }
        out << "\n";
    }
    for (const auto& e : store.events(run))
        ++d.events[e.kind];
    d.text = out.str();
    return d;
}

// Processes whose command line holds `marker` (a worker, its ssh or srun, a worker on the far side of ssh or srun);
// only this process's children with children_only.
inline std::vector<pid_t> pids_with(const std::string& marker, bool children_only = false) {
    std::vector<pid_t> out;
    DIR* proc = opendir("/proc");
    if (!proc)
        return out;
    while (dirent* e = readdir(proc)) {
        const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
        if (pid <= 0 || pid == getpid())
            continue;
        if (children_only) {
            std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
            std::string statline;
            std::getline(stat, statline);
            const auto close = statline.rfind(')');
            if (close == std::string::npos)
                continue;
            std::istringstream rest(statline.substr(close + 2));
            char state;
            pid_t ppid = 0;
            rest >> state >> ppid;
            if (ppid != getpid())
                continue;
        }
        std::ifstream cmd("/proc/" + std::string(e->d_name) + "/cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        if (cmdline.find(marker) != std::string::npos)
            out.push_back(pid);
    }
    closedir(proc);
    return out;
}

inline std::vector<pid_t> child_pids_with(const std::string& marker) { return pids_with(marker, true); }

// Alive and not a zombie.
inline bool process_alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return false;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z' && line[close + 2] != 'X';
}

// Whether every one of `pids` ends within timeout_ms.
inline bool all_end_within(const std::vector<pid_t>& pids, int timeout_ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        bool any = false;
        for (pid_t p : pids)
            any = any || process_alive(p);
        if (!any)
            return true;
        if (std::chrono::steady_clock::now() >= until)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// A measure request for a problem's reference (recorded on every replay device).
inline MeasureRequest reference_request(const std::string& problem) {
    const ProblemBundle b = load_problem_folder(cli::resources_dir() + "/problems/" + problem);
    MeasureRequest r;
    r.problem_dir = b.problem.dir;
    r.candidate.source = b.reference.source;
    r.candidate.file_name = "reference.cu";
    r.reference = r.candidate;
    return r;
}

struct KilledBatch {
    int ok = 0;  // jobs that came back measured
    std::vector<PoolNote> notes;
};

// Measures `jobs` copies of the softmax reference while `victim` (a worker, or its ssh or srun) is killed after
// delay_ms: a worker lost mid-measurement.
inline KilledBatch measure_while_killing(MeasurementPool& pool, pid_t victim, int jobs, int delay_ms) {
    std::thread killer([victim, delay_ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        ::kill(victim, SIGKILL);
    });
    std::vector<MeasurementPool::Job> batch;
    for (int i = 0; i < jobs; ++i)
        batch.push_back({reference_request("softmax"), i + 1});
    KilledBatch out;
    pool.measureBatch(batch, [&](size_t, MeasureOutcome& o) { out.ok += o.measurement.status == Status::Ok; });
    killer.join();
    out.notes = pool.takeNotes();
    return out;
}

}  // namespace kerncast::test
