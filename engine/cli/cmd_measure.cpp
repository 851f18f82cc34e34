// kerncast-cli measure --problem P --kernel F [--device D] [--tunable NAME=V ...]: verify and time one kernel program
// against the problem's reference. Exit code 0 when the candidate measured ok, 2 when it was measured but failed
// (compile error, crash, incorrect, timeout, not recorded, suspect), 1 when nothing could be measured.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"

#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct MeasureArgs {
    std::string problem;
    std::string kernel;
    std::string device;
    std::vector<std::string> tunables;
    int seeds = 3;
    std::string seed;  // to replay a measurement whose reason named its seed
    double deadline_s = 120;
    bool verify_only = false;
};

// The tunables given must be a valid configuration of the program; a missing one is named rather than guessed.
void check_tunables(const std::string& file, const std::string& source, const std::map<std::string, int64_t>& given) {
    KernelProgram k;
    try {
        k = KernelProgram::parse(source, file);
    } catch (const Error&) {
        return;  // the device reports launch-plan errors with the measurement (compile_error)
    }
    for (const auto& [name, value] : given)
        if (!k.tunable(name))
            throw Error(file + " declares no tunable " + name);
    std::string missing;
    for (const auto& t : k.tunables)
        if (!given.count(t.name))
            missing += (missing.empty() ? "" : ", ") + t.name;
    if (!missing.empty())
        throw Error(file + " declares tunables it was not given: " + missing +
                    " (give each with --tunable NAME=VALUE)");
    if (!k.isValid(given))
        throw Error("these tunable values are not a valid configuration of " + file +
                    " (a value is not among the allowed ones, or a where-condition fails)");
}

std::string default_device(std::string* why) {
    for (const auto& d : list_devices(resources_dir())) {
        if (!d.id.empty())
            return d.id;
        if (why)
            *why = d.note;
    }
    return "";
}

std::string us(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f us", v);
    return buf;
}

void print_text(std::ostream& out, const std::string& device_id, const std::string& kernel,
                const std::map<std::string, int64_t>& tunables, const MeasureOutcome& o) {
    const auto& m = o.measurement;
    std::string t;
    for (const auto& [k, v] : tunables)
        t += " " + k + "=" + std::to_string(v);
    out << "device     " << device_id << (m.device.name.empty() ? "" : " (" + m.device.name + ")") << "\n";
    out << "kernel     " << kernel << t << "\n";
    out << "status     " << to_string(m.status) << "\n";
    if (!m.reason.empty())
        out << "reason     " << m.reason << "\n";
    if (m.candidate && m.reference) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3fx", m.speedup);
        out << "speedup    " << buf << (m.reverified ? " (re-verified)" : "") << "\n";
    }
    if (m.candidate)
        out << "candidate  " << us(m.candidate->median_us) << " median of " << m.candidate->n << " (p10 "
            << us(m.candidate->p10_us) << ", p90 " << us(m.candidate->p90_us) << ")\n";
    if (m.reference)
        out << "reference  " << us(m.reference->median_us) << " median of " << m.reference->n << "\n";
    if (m.roofline_floor_us > 0)
        out << "floor      " << us(m.roofline_floor_us) << " (roofline)\n";
    if (m.seeds_checked > 0)
        out << "verified   " << m.seeds_checked << " seeds, max abs error " << m.max_abs_error << "\n";
    for (const auto& r : o.static_report)
        out << "static     " << r.kernel << ": " << r.registers << " registers, " << r.shared_bytes << " B shared, "
            << r.spill_store_bytes + r.spill_load_bytes << " B spilled\n";
    char ms[96];
    std::snprintf(ms, sizeof ms, "compile %.1f ms, verify %.1f ms, time %.1f ms", m.compile_ms, m.verify_ms, m.time_ms);
    out << "wall       " << ms << "\n";
    if (!o.compile_log.empty())
        out << "compile log:\n" << o.compile_log << (o.compile_log.back() == '\n' ? "" : "\n");
}

void run_measure(Context& ctx, const MeasureArgs& args) {
    try {
        const std::string problem_dir = resolve_problem_dir(args.problem);
        const Problem problem = Problem::load(problem_dir);
        const auto tunables = parse_tunables(args.tunables);

        MeasureRequest req;
        req.problem_dir = problem_dir;
        req.candidate.source = read_kernel_file(args.kernel);
        req.candidate.file_name = fs::path(args.kernel).filename().string();
        req.candidate.tunables = tunables;
        check_tunables(req.candidate.file_name, req.candidate.source, tunables);
        const std::string ref_path = problem.referencePath();
        req.reference.source = read_kernel_file(ref_path);
        req.reference.file_name = fs::path(ref_path).filename().string();
        // A reference with tunables is measured at its first valid configuration.
        const auto ref_configs = KernelProgram::parse(req.reference.source, ref_path).configurations(1);
        if (!ref_configs.empty())
            req.reference.tunables = ref_configs.front();
        req.options.seeds = args.seeds;
        if (!args.seed.empty()) {
            size_t used = 0;
            try {
                if (args.seed.find('-') == std::string::npos)  // stoull would wrap "-1" around
                    req.options.seed_base = std::stoull(args.seed, &used, 0);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != args.seed.size() || req.options.seed_base == 0)
                throw Error("--seed: expected a non-zero number such as 0x2f1c5e9a07b3d482 (the seed a failure's "
                            "reason names after \"to reproduce\"), found \"" +
                            args.seed + "\"");
        }
        req.options.deadline_s = args.deadline_s;
        req.options.verify_only = args.verify_only;

        std::string device_id = args.device;
        if (device_id.empty()) {
            std::string why;
            device_id = default_device(&why);
            if (device_id.empty())
                throw Error("no device to measure on: " + why + ", and no recordings under " + resources_dir() +
                            "/recordings");
        }
        auto device = open_device(device_id, resources_dir());
        const MeasureOutcome outcome = device->measure(req, [&ctx](const std::string& stage) {
            if (!ctx.json && stage != "done")
                *ctx.err << "  " << stage << "...\n";
        });
        if (ctx.json) {
            *ctx.out << nlohmann::json{{"ok", true},
                                       {"device", device->id()},
                                       {"problem", problem.name},
                                       {"kernel", args.kernel},
                                       {"tunables", tunables},
                                       {"measurement", outcome.measurement},
                                       {"static", outcome.static_report},
                                       {"compile_log", outcome.compile_log}}
                            .dump(2)
                     << "\n";
        } else {
            print_text(*ctx.out, device->id(), req.candidate.file_name, tunables, outcome);
        }
        ctx.exit_code = outcome.measurement.status == Status::Ok ? 0 : 2;
    } catch (const std::exception& e) {
        report_failure(ctx, "measure", e.what());
    }
}

}  // namespace

void add_measure_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<MeasureArgs>();
    auto* cmd =
        app.add_subcommand("measure", "Verify and time a kernel program against the problem's reference (exit code 0: "
                                      "ok, 2: measured but not ok, 1: error)");
    cmd->add_option("--problem", args->problem, "Problem name (under resources/problems) or folder")->required();
    cmd->add_option("--kernel", args->kernel, "Kernel program (.cu) to measure")->required();
    cmd->add_option("--device", args->device, "cuda:N or replay:<recording> (default: the first listed)");
    cmd->add_option("--tunable", args->tunables, "NAME=VALUE for each tunable the program declares");
    cmd->add_option("--seeds", args->seeds, "Fresh input sets to verify with")->check(CLI::Range(1, 100));
    cmd->add_option("--deadline", args->deadline_s, "Seconds before a hung worker is killed");
    cmd->add_flag("--verify-only", args->verify_only, "Check correctness only; no timing");
    cmd->add_option("--seed", args->seed,
                    "Derive the input sets from this seed (a failure's reason names it) instead of fresh random ones");
    cmd->callback([&ctx, args] { run_measure(ctx, *args); });
}

}  // namespace kerncast::cli
