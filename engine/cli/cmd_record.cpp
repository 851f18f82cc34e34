// kerncast-cli record --problem P --device cuda:0 [--out DIR] [--pytorch-us X] [--limit N]
// [--continue-on-another-gpu]: measure the reference, every seed and the family's configurations, appending each to
// <DIR>/<device>/<problem>.jsonl for replay.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"
#include "engine/replay/recorder.h"

#include "core/error.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ostream>

namespace kerncast::cli {

namespace {

struct RecordArgs {
    std::string problem;
    std::string device;
    std::string out;
    double pytorch_us = -1;
    size_t limit = 0;
    int seeds = 3;
    bool continue_on_another_gpu = false;
};

void run_record(Context& ctx, const RecordArgs& args) {
    try {
        const std::string problem_dir = resolve_problem_dir(args.problem);
        auto device = open_device(args.device, resources_dir());
        RecordOptions options;
        options.out_dir = args.out.empty() ? resources_dir() + "/recordings" : args.out;
        options.limit = args.limit;
        options.measure.seeds = args.seeds;
        options.continue_on_another_gpu = args.continue_on_another_gpu;
        if (args.pytorch_us >= 0)
            options.pytorch_eager_us = args.pytorch_us;
        options.ceilings = device->ceilings();

        // Each program's time so far gives what is left: a problem whose reference is slow takes seconds per
        // configuration (the reference runs beside every timed launch and for every verification).
        const auto started = std::chrono::steady_clock::now();
        size_t measured = 0;
        const auto left = [&](const RecordProgress& p) {
            const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() /
                               static_cast<double>(measured);
            const double rest = per * static_cast<double>(p.total - p.index);
            char text[96];
            if (rest < 90)
                std::snprintf(text, sizeof text, " (%.1f s each; about %.0f s left)", per, rest);
            else
                std::snprintf(text, sizeof text, " (%.1f s each; about %.0f min left)", per, rest / 60);
            return std::string(p.index < p.total ? text : "");
        };
        const auto summary = record_problem(*device, problem_dir, options, [&](const RecordProgress& p) {
            if (ctx.json)
                return;
            char line[64];
            std::snprintf(line, sizeof line, "[%zu/%zu] ", p.index, p.total);
            *ctx.err << line << p.label << ": ";
            if (p.skipped) {
                *ctx.err << "already recorded\n";
            } else {
                *ctx.err << to_string(p.measurement.status);
                ++measured;
                if (p.measurement.status == Status::Ok) {
                    std::snprintf(line, sizeof line, " %.3fx", p.measurement.speedup);
                    *ctx.err << line;
                } else if (!p.measurement.reason.empty()) {
                    *ctx.err << " (" << p.measurement.reason.substr(0, 160) << ")";
                }
                *ctx.err << left(p) << "\n";
            }
        });
        if (ctx.json) {
            *ctx.out << nlohmann::json{{"ok", true},
                                       {"file", summary.file},
                                       {"measured", summary.measured},
                                       {"skipped", summary.skipped},
                                       {"ok_count", summary.ok},
                                       {"failed", summary.failed}}
                            .dump(2)
                     << "\n";
        } else {
            *ctx.out << "recorded " << summary.measured << " programs (" << summary.ok << " ok, " << summary.failed
                     << " failed, " << summary.skipped << " already there) in " << summary.file << "\n";
        }
    } catch (const std::exception& e) {
        report_failure(ctx, "record", e.what());
    }
}

}  // namespace

void add_record_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<RecordArgs>();
    auto* cmd = app.add_subcommand("record", "Record a problem's reference, seeds and family on a GPU for replay");
    cmd->add_option("--problem", args->problem, "Problem name (under resources/problems) or folder")->required();
    cmd->add_option("--device", args->device, "Device to record on, e.g. cuda:0")->required();
    cmd->add_option("--out", args->out, "Recordings folder (default: resources/recordings)");
    cmd->add_option("--pytorch-us", args->pytorch_us, "PyTorch eager time of the problem, kept in the header");
    cmd->add_option("--limit", args->limit, "At most this many family configurations (0: all)");
    cmd->add_option("--seeds", args->seeds, "Fresh input sets to verify each program with")->check(CLI::Range(1, 100));
    cmd->add_flag("--continue-on-another-gpu", args->continue_on_another_gpu,
                  "Go on with a recording started on another GPU of the same model (recordings made over several "
                  "short leases), under the power limit it was started with; each entry keeps the GPU that "
                  "measured it");
    cmd->callback([&ctx, args] { run_record(ctx, *args); });
}

}  // namespace kerncast::cli
