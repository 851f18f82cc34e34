// kerncast-cli sweep --problem P --kernel F [--tunable NAME=V ...] --sizes "N=1024,4096" | --around benchmark: the
// candidate and the reference measured (and correctness-checked) at each size, so that a kernel timed at one
// benchmark size can be trusted at the sizes a project uses. With --run R [--candidate ID|best] the kernel comes from
// the run and the results are stored in it (a "sweep" event); --top K re-ranks the run's K fastest at each size. Needs
// a GPU: a recording holds one size.
#include "engine/cli/cli.h"
#include "engine/cli/export_kernel.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"

#include "core/error.h"
#include "core/kernel_export.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/run_store.h"
#include "core/text_util.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <sstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct SweepArgs {
    std::string problem;
    std::string kernel;
    std::vector<std::string> tunables;
    std::vector<std::string> sizes;  // "NAME=v1,v2,..."
    std::string around;              // "benchmark"
    std::string device;
    std::string run;
    int64_t run_id = 0;
    std::string candidate;
    int top = 0;  // --top K: the run's K fastest candidates, re-ranked at each size
    int seeds = 3;
    double deadline_s = 300;
};

// --sizes "N=1024,4096" (several options: their cross product); sizes not named keep their benchmark values.
std::vector<Bindings> sizes_from_lists(const Problem& problem, const std::vector<std::string>& lists) {
    std::vector<Bindings> cases = {problem.benchmark};
    const auto names = problem.sizeNames();
    for (const auto& list : lists) {
        const auto eq = list.find('=');
        const std::string name = trim(list.substr(0, eq == std::string::npos ? 0 : eq));
        if (eq == std::string::npos || std::find(names.begin(), names.end(), name) == names.end())
            throw Error("--sizes '" + list + "': expected NAME=v1,v2,... with NAME one of the problem's sizes (" +
                        join_names(names) + ")");
        std::vector<int64_t> values;
        std::stringstream in(list.substr(eq + 1));
        for (std::string item; std::getline(in, item, ',');) {
            try {
                size_t used = 0;
                const long long v = std::stoll(trim(item), &used);
                if (used != trim(item).size() || v <= 0)
                    throw std::invalid_argument(item);
                values.push_back(v);
            } catch (const std::exception&) {
                throw Error("--sizes '" + list + "': '" + trim(item) + "' is not a positive integer");
            }
        }
        if (values.empty())
            throw Error("--sizes '" + list + "': no values");
        std::vector<Bindings> next;
        for (const auto& c : cases)
            for (int64_t v : values) {
                Bindings b = c;
                b[name] = v;
                next.push_back(b);
            }
        cases = std::move(next);
    }
    return cases;
}

// --around benchmark: the benchmark case with its largest size at 1/16, 1/4, 1/2, 1 and 2 times its value (an odd
// size below it too, since sizes that do not divide a block are where kernels break), the others unchanged.
std::vector<Bindings> sizes_around_benchmark(const Problem& problem) {
    std::string largest;
    for (const auto& [k, v] : problem.benchmark)
        if (largest.empty() || v > problem.benchmark.at(largest))
            largest = k;
    if (largest.empty())
        throw Error(problem.file + ": the benchmark case has no sizes to sweep");
    const int64_t base = problem.benchmark.at(largest);
    std::vector<int64_t> values;
    for (const double f : {1.0 / 16, 1.0 / 4, 1.0 / 2, 1.0, 2.0}) {
        const int64_t v = std::max<int64_t>(1, static_cast<int64_t>(std::llround(base * f)));
        if (std::find(values.begin(), values.end(), v) == values.end())
            values.push_back(v);
    }
    const int64_t odd = (base / 2 - 1) | 1;  // an odd size just under half: a tail no vector width divides
    if (base / 2 > 1 && std::find(values.begin(), values.end(), odd) == values.end())
        values.insert(values.begin() + 2, odd);
    std::vector<Bindings> out;
    for (int64_t v : values) {
        Bindings b = problem.benchmark;
        b[largest] = v;
        out.push_back(b);
    }
    return out;
}

std::string describe_sizes(const Bindings& sizes) {
    std::string out;
    for (const auto& [k, v] : sizes)
        out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return out;
}

// The problem at one size: its problem.json with the benchmark case set to it and the size as the first correctness
// case (the second stays the problem's own first, a small odd one), written into its own folder.
std::string problem_at(const Problem& problem, const Bindings& sizes, const fs::path& folder) {
    nlohmann::json j = nlohmann::json::parse(problem.json_text);
    j["sizes"]["benchmark"] = sizes;
    nlohmann::json correctness = nlohmann::json::array({sizes});
    correctness.push_back(problem.correctness.front() == sizes ? problem.correctness.back()
                                                               : problem.correctness.front());
    j["sizes"]["correctness"] = correctness;
    fs::create_directories(folder);
    write_file_atomically((folder / "problem.json").string(), j.dump(2) + "\n");
    Problem::load(folder.string());  // the sizes must make a valid problem (shapes, init bounds)
    return folder.string();
}

std::string first_cuda_device() {
    std::string why;
    for (const auto& d : list_devices(resources_dir())) {
        if (d.kind == "cuda" && !d.id.empty())
            return d.id;
        if (d.kind == "cuda" || (d.id.empty() && why.empty()))
            why = d.note;
    }
    throw Error("sweep measures on a GPU and none is visible" + (why.empty() ? std::string() : ": " + why) +
                " (a recording holds one size, so a replay device cannot sweep)");
}

// One row per size: the program and the reference measured there.
struct Sweeper {
    Context& ctx;
    const SweepArgs& args;
    const Problem& problem;
    Device& device;
    const ProgramRef& reference;
    const std::vector<Bindings>& cases;
    fs::path scratch;
    int failed = 0;

    nlohmann::json sweep(const ProgramRef& program) {
        nlohmann::json results = nlohmann::json::array();
        for (size_t i = 0; i < cases.size(); ++i) {
            const nlohmann::json row = measure(program, i);
            if (!ctx.json)
                print(row, i == 0);
            results.push_back(row);
        }
        return results;
    }

    nlohmann::json measure(const ProgramRef& program, size_t i) {
        const Bindings& sizes = cases[i];
        nlohmann::json row = {{"sizes", sizes}};
        try {
            MeasureRequest req;
            req.problem_dir = problem_at(problem, sizes, scratch / std::to_string(i));
            req.candidate = program;
            req.reference = reference;
            req.options.seeds = args.seeds;
            req.options.deadline_s = args.deadline_s;
            const Measurement m = device.measure(req).measurement;
            row["status"] = to_string(m.status);
            if (!m.reason.empty())
                row["reason"] = m.reason;
            if (m.candidate)
                row["candidate_us"] = m.candidate->median_us;
            if (m.reference)
                row["reference_us"] = m.reference->median_us;
            if (m.status == Status::Ok)
                row["speedup"] = m.speedup;
            row["max_abs_error"] = m.max_abs_error;
            failed += m.status != Status::Ok;
        } catch (const std::exception& e) {
            row["status"] = "error";
            row["reason"] = e.what();
            ++failed;
        }
        return row;
    }

    void print(const nlohmann::json& row, bool header) const {
        auto number = [&row](const char* key, const char* format) -> std::string {
            if (!row.contains(key))
                return "-";
            char buf[32];
            std::snprintf(buf, sizeof buf, format, row[key].get<double>());
            return buf;
        };
        char line[256];
        std::snprintf(line, sizeof line, "%-32s %-12s %12s %12s %9s",
                      describe_sizes(row["sizes"].get<Bindings>()).c_str(), row["status"].get<std::string>().c_str(),
                      number("candidate_us", "%.2f").c_str(), number("reference_us", "%.2f").c_str(),
                      number("speedup", "%.3fx").c_str());
        if (header)
            *ctx.out << "sizes                            status       candidate us reference us   speedup\n";
        *ctx.out << line << (row.contains("reason") ? "  " + row["reason"].get<std::string>() : "") << "\n";
    }
};

// The swept programs of a run: the chosen candidate, or its --top K fastest.
struct Swept {
    ProgramRef program;
    int64_t id = 0;
};

std::vector<Swept> programs_of_run(RunStore& store, const RunInfo& run, const SweepArgs& a) {
    std::vector<Swept> out;
    auto add = [&out](const Candidate& c) {
        out.push_back({{c.source, c.label.empty() ? "candidate.cu" : c.label, c.tunables}, c.id});
    };
    if (a.top > 0) {
        if (!a.candidate.empty())
            throw Error("give --candidate or --top, not both");
        for (const auto& c : best_candidates(store, run, static_cast<size_t>(a.top)))
            add(c.candidate);
        if (out.empty())
            throw Error(SourceLocation{a.run, 0},
                        "run " + std::to_string(run.id) + " has no candidate measured correct on a device to re-rank");
        return out;
    }
    add(choose_candidate(store, run, a.candidate.empty() ? "best" : a.candidate, a.run).candidate);
    return out;
}

// --top K: at each size, the candidates by their time there, the fastest first (failed ones last).
nlohmann::json ranking(const std::vector<Bindings>& cases, const nlohmann::json& swept) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < cases.size(); ++i) {
        std::vector<std::pair<double, int64_t>> order;
        for (const auto& s : swept) {
            const auto& row = s["results"][i];
            order.push_back({row.value("status", "") == "ok" ? row.value("candidate_us", 1e300) : 1e300,
                             s["candidate"].get<int64_t>()});
        }
        std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        nlohmann::json ids = nlohmann::json::array();
        for (const auto& [us, id] : order)
            ids.push_back(id);
        out.push_back({{"sizes", cases[i]}, {"candidates", ids}});
    }
    return out;
}

void run_sweep(Context& ctx, const SweepArgs& a) {
    if (a.sizes.empty() == a.around.empty())
        throw Error("give --sizes NAME=v1,v2,... or --around benchmark");
    if (!a.around.empty() && a.around != "benchmark")
        throw Error("--around takes benchmark, not '" + a.around + "'");
    if (a.top > 0 && a.run.empty())
        throw Error("--top re-ranks the candidates of a run: give --run RUN_FILE");

    std::vector<Swept> programs;
    std::string problem_arg = a.problem;
    std::optional<RunStore> store;
    std::optional<RunInfo> run;
    if (!a.run.empty()) {
        if (!a.kernel.empty() || !a.tunables.empty())
            throw Error("give --run with --candidate, or --kernel with --tunable, not both");
        store.emplace(open_run_store(a.run, true));
        run = select_run(*store, a.run, a.run_id);
        programs = programs_of_run(*store, *run, a);
        if (problem_arg.empty())
            problem_arg = problem_dir_of_run(*store, *run);
    } else {
        if (a.problem.empty() || a.kernel.empty())
            throw Error("give --problem P --kernel FILE [--tunable NAME=VALUE ...], or --run RUN_FILE [--candidate "
                        "ID|best]");
        programs.push_back(
            {{read_kernel_file(a.kernel), fs::path(a.kernel).filename().string(), parse_tunables(a.tunables)}, 0});
    }
    const std::string problem_dir = resolve_problem_dir(problem_arg);
    const Problem problem = Problem::load(problem_dir);
    for (const auto& p : programs)
        check_configuration(KernelProgram::parse(p.program.source, p.program.file_name),
                            Bindings(p.program.tunables.begin(), p.program.tunables.end()));
    const std::vector<Bindings> cases =
        a.around.empty() ? sizes_from_lists(problem, a.sizes) : sizes_around_benchmark(problem);

    const std::string device_id = a.device.empty() ? first_cuda_device() : a.device;
    auto device = open_device(device_id, resources_dir());
    if (!device->recordingsFolder().empty())
        throw Error(device_id + " answers from recordings, and a recording holds each program at the problem's one "
                                "benchmark size: sweep needs a GPU (--device cuda:N)");

    ProgramRef reference;
    reference.source = read_kernel_file(problem.referencePath());
    reference.file_name = fs::path(problem.referencePath()).filename().string();
    const auto ref_configs = KernelProgram::parse(reference.source, problem.referencePath()).configurations(1);
    if (!ref_configs.empty())
        reference.tunables = std::map<std::string, int64_t>(ref_configs.front().begin(), ref_configs.front().end());

    Sweeper sweeper{ctx,
                    a,
                    problem,
                    *device,
                    reference,
                    cases,
                    fs::temp_directory_path() / ("kerncast-sweep-" + std::to_string(::getpid()))};
    const std::string device_name = device->fingerprint().name;
    nlohmann::json swept = nlohmann::json::array();
    for (const auto& p : programs) {
        if (!ctx.json && programs.size() > 1)
            *ctx.out << "candidate " << p.id << " (" << p.program.file_name << ")\n";
        nlohmann::json s = {{"candidate", p.id},
                            {"kernel", p.program.file_name},
                            {"tunables", p.program.tunables},
                            {"results", sweeper.sweep(p.program)}};
        if (store)
            s["event_id"] = store->addEvent(
                run->id, "sweep",
                {{"candidate", p.id}, {"device", device_id}, {"device_name", device_name}, {"results", s["results"]}});
        swept.push_back(std::move(s));
    }
    std::error_code ec;
    fs::remove_all(sweeper.scratch, ec);

    nlohmann::json summary = {
        {"ok", sweeper.failed == 0}, {"problem", problem.name}, {"device", device_id}, {"device_name", device_name}};
    if (programs.size() == 1) {
        summary.update(swept.front());
        if (!store)
            summary.erase("candidate");
    } else {
        summary["candidates"] = swept;
        summary["ranking"] = ranking(cases, swept);
        if (!ctx.json)
            for (const auto& r : summary["ranking"]) {
                std::string ids;
                for (const auto& id : r["candidates"])
                    ids += (ids.empty() ? "#" : " > #") + std::to_string(id.get<int64_t>());
                *ctx.out << "fastest at " << describe_sizes(r["sizes"].get<Bindings>()) << ": " << ids << "\n";
            }
    }
    if (ctx.json)
        *ctx.out << summary.dump(2) << "\n";
    else if (store)
        *ctx.err << "stored in " << a.run << " (run " << run->id << ", a sweep event per candidate)\n";
    ctx.exit_code = sweeper.failed ? 2 : 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<SweepArgs>();
    auto* cmd = app.add_subcommand("sweep", "Measure a kernel and the reference across sizes, correctness-checked at "
                                            "each (exit code 0: all ok, 2: a size failed, 1: error)");
    cmd->add_option("--problem", args->problem, "Problem name or folder (default with --run: the run's problem)");
    cmd->add_option("--kernel", args->kernel, "Kernel program (.cu) to sweep");
    cmd->add_option("--tunable", args->tunables, "NAME=VALUE for each tunable the program declares");
    cmd->add_option("--sizes", args->sizes,
                    "NAME=v1,v2,... (several: every combination); other sizes keep their benchmark values");
    cmd->add_option("--around", args->around,
                    "benchmark: the largest benchmark size at 1/16, 1/4, 1/2 (and just below, odd), 1 and 2 times");
    cmd->add_option("--device", args->device, "cuda:N (default: the first GPU)");
    cmd->add_option("--run", args->run, "Run store: sweep its candidate and store the results in the run");
    cmd->add_option("--run-id", args->run_id, "Which run of the file (default: the last)");
    cmd->add_option("--candidate", args->candidate, "With --run: the candidate id, or best (the default)");
    cmd->add_option("--top", args->top, "With --run: sweep the run's K fastest candidates and rank them at each size")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--seeds", args->seeds, "Fresh input sets to verify with at each size")->check(CLI::Range(1, 100));
    cmd->add_option("--deadline", args->deadline_s, "Seconds per size before a hung worker is killed");
    cmd->callback([&ctx, args] {
        try {
            run_sweep(ctx, *args);
        } catch (const std::exception& e) {
            report_failure(ctx, "sweep", e.what());
        }
    });
}

}  // namespace kerncast::cli
