// kerncast-cli prepare --device cuda:0 [--problem P ...] [--seed K ...] [--json]: does ahead what a search's first
// run on a machine does before its first measurement, so that a demo or a lecture does not wait: each GPU's worker
// measures the GPU's ceilings (cached per GPU), and the local forecaster's base model is trained for every problem
// (cached per problem, recordings, seed and model code). Says each step as it starts and what it took.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"
#include "engine/search/search_runner.h"
#include "engine/surrogate/local_forecaster.h"

#include "core/error.h"
#include "core/problem_library.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct PrepareArgs {
    std::vector<std::string> devices{"cuda:0"};
    std::vector<std::string> problems;  // empty: every problem of the library
    std::vector<uint64_t> seeds{1};
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_prepare(Context& ctx, const PrepareArgs& a) {
    const std::string resources = resources_dir();
    std::ostream& err = *ctx.err;
    const bool talk = !ctx.json;
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json models = nlohmann::json::array();
    try {
        std::vector<std::string> problems;
        for (const std::string& p : a.problems)
            problems.push_back(resolve_problem_dir(p));
        if (problems.empty())
            problems = list_problem_folders((fs::path(resources) / "problems").string());
        for (const std::string& id : a.devices) {
            if (talk)
                err << "prepare: starting " << id
                    << " (a GPU's worker measures the GPU's ceilings once; they are cached per GPU)\n";
            const auto started = std::chrono::steady_clock::now();
            std::unique_ptr<Device> device = open_device(id, resources);
            const DeviceCeilings c = device->ceilings();
            const double opened = seconds_since(started);
            if (talk) {
                char line[320];
                std::snprintf(line, sizeof line,
                              "prepare: %s is %s: DRAM %.0f GB/s, FP32 %.1f TFLOP/s, L2 %.0f MiB (ready in %.1f s)\n",
                              device->id().c_str(), device->fingerprint().name.c_str(), c.dram_gbps, c.fp32_tflops,
                              double(c.l2_bytes) / (1 << 20), opened);
                err << line;
            }
            devices.push_back({{"device", device->id()},
                               {"name", device->fingerprint().name},
                               {"dram_gbps", c.dram_gbps},
                               {"fp32_tflops", c.fp32_tflops},
                               {"l2_bytes", c.l2_bytes},
                               {"seconds", opened}});
            size_t k = 0;
            const size_t total = problems.size() * a.seeds.size();
            for (const std::string& dir : problems) {
                const std::string name = load_problem_folder(dir).problem.name;
                for (uint64_t seed : a.seeds) {
                    ++k;
                    const auto t0 = std::chrono::steady_clock::now();
                    auto surrogate = make_local_surrogate(*device, resources, name, seed);
                    const double s = seconds_since(t0);
                    const std::string base = surrogate->baseSource();
                    if (talk) {
                        char line[400];
                        std::snprintf(line, sizeof line,
                                      "prepare: [%zu/%zu] forecaster for %s, seed %llu: %s in %.1f s\n", k, total,
                                      name.c_str(), static_cast<unsigned long long>(seed),
                                      base.rfind("cache", 0) == 0 ? "already cached" : "trained", s);
                        err << line;
                    }
                    models.push_back(
                        {{"device", device->id()}, {"problem", name}, {"seed", seed}, {"base", base}, {"seconds", s}});
                }
            }
        }
    } catch (const std::exception& e) {
        report_failure(ctx, "prepare", e.what());
        return;
    }
    if (ctx.json)
        *ctx.out << nlohmann::json{{"ok", true}, {"devices", devices}, {"forecasters", models}}.dump(2) << "\n";
    else
        *ctx.out << "prepared " << devices.size() << " device(s) and " << models.size()
                 << " forecaster base model(s): searches with these settings start measuring at once\n";
}

}  // namespace

void add_prepare_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<PrepareArgs>();
    auto* cmd =
        app.add_subcommand("prepare", "Do ahead what a search's first run does before its first measurement: measure "
                                      "each GPU's ceilings and train the local forecaster's base models (both cached)");
    cmd->add_option("--device", args->devices, "cuda:N or replay:<recording folder>; repeat for several")
        ->capture_default_str();
    cmd->add_option("--problem", args->problems,
                    "Problem name or folder; repeat for several (default: every problem of the library)");
    cmd->add_option("--seed", args->seeds, "Search seeds to prepare the forecaster for (each has its own base model)")
        ->capture_default_str();
    cmd->callback([&ctx, args] { run_prepare(ctx, *args); });
}

}  // namespace kerncast::cli
