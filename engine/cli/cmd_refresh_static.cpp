// kerncast-cli refresh-static (--problem P ... | --all) [--recordings DIR] [--dry-run]: compiles every program a
// problem's recordings hold again, for each recording's GPU architecture, and puts right the static reports that a
// driver's compile cache left incomplete (engine/replay/recording_static.h says how it tells them). No GPU is used and
// nothing is measured.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/gpu/compiler.h"
#include "engine/replay/recording_static.h"

#include "core/error.h"
#include "core/problem.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <thread>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct RefreshArgs {
    std::vector<std::string> problems;
    bool all = false;
    std::string recordings;
    bool dry_run = false;
};

void run_refresh(Context& ctx, const RefreshArgs& a) {
    try {
        if (a.all == !a.problems.empty())
            throw Error("give --problem (one or more) or --all");
        const std::string root = recordings_root(a.recordings);
        // (problem folder, recording file) pairs.
        std::vector<std::pair<std::string, std::string>> work;
        if (a.all) {
            for (const auto& device : fs::directory_iterator(root)) {
                if (!device.is_directory())
                    continue;
                for (const auto& f : fs::directory_iterator(device.path())) {
                    const fs::path folder = fs::path(resources_dir()) / "problems" / f.path().stem();
                    if (f.path().extension() == ".jsonl" && fs::exists(folder / "problem.json"))
                        work.emplace_back(folder.string(), f.path().string());
                }
            }
            std::sort(work.begin(), work.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
        } else {
            for (const auto& p : a.problems) {
                const std::string dir = resolve_problem_dir(p);
                for (const auto& file : problem_recordings(root, Problem::load(dir).name))
                    work.emplace_back(dir, file);
            }
        }
        // One NVRTC compile per core, at most 8 at once (each holds hundreds of MB).
        Compiler compiler("", std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
        nlohmann::json report = nlohmann::json::array();
        size_t updated = 0, failed = 0;
        for (const auto& [dir, file] : work) {
            const StaticRefresh r = refresh_static_reports(file, dir, compiler, a.dry_run);
            updated += r.updated;
            failed += r.not_compiled;
            report.push_back({{"file", r.file},
                              {"arch", r.arch},
                              {"updated", r.updated},
                              {"same", r.same},
                              {"not_compiled", r.not_compiled},
                              {"other", r.other},
                              {"without_report", r.without_report},
                              {"allocated_otherwise", r.allocated_otherwise},
                              {"changed_shared", r.changed_shared},
                              {"changed_spills", r.changed_spills},
                              {"failures", r.failures},
                              {"changes", r.changes},
                              {"allocated_otherwise_lines", r.kept}});
            if (!ctx.json) {
                *ctx.out << r.file << " (" << r.arch << "): " << r.updated
                         << (a.dry_run ? " report(s) would be put right" : " report(s) put right");
                if (r.updated > 0)
                    *ctx.out << " (shared memory of " << r.changed_shared << " kernel(s), spills of "
                             << r.changed_spills << ")";
                *ctx.out << ", " << r.same << " already the compiler's, " << r.allocated_otherwise
                         << " allocated otherwise here (kept), " << r.other
                         << " of programs the folder no longer holds (kept)";
                if (r.without_report > 0)
                    *ctx.out << ", " << r.without_report << " without a static report (kept, not compiled)";
                if (r.not_compiled > 0)
                    *ctx.out << ", " << r.not_compiled << " not compiled here (kept)";
                *ctx.out << "\n";
                for (const auto& c : r.changes)
                    *ctx.out << "  " << c << "\n";
                for (const auto& k : r.kept)
                    *ctx.out << "  allocated otherwise here: " << k << "\n";
                for (const auto& f : r.failures)
                    *ctx.out << "  not compiled: " << f << "\n";
            }
        }
        if (ctx.json)
            *ctx.out << nlohmann::json{{"ok", true}, {"dry_run", a.dry_run}, {"recordings", report}}.dump(2) << "\n";
        else
            *ctx.out << work.size() << " recording(s), " << updated << " report(s) "
                     << (a.dry_run ? "would be put right" : "put right") << ", " << failed << " not compiled\n";
    } catch (const std::exception& e) {
        report_failure(ctx, "refresh-static", e.what());
    }
}

}  // namespace

void add_refresh_static_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<RefreshArgs>();
    auto* cmd = app.add_subcommand("refresh-static",
                                   "Compile the programs a problem's recordings hold again (no GPU) and put right the "
                                   "static reports a driver's compile cache left without shared memory and spills");
    cmd->add_option("--problem", args->problems, "Problem name (under resources/problems) or folder (repeat)");
    cmd->add_flag("--all", args->all, "Every recording whose problem the library holds");
    cmd->add_option("--recordings", args->recordings,
                    "Recordings folder, one subfolder per device (default: the library's recordings)");
    cmd->add_flag("--dry-run", args->dry_run, "Say what would be replaced; write nothing");
    cmd->callback([&ctx, args] { run_refresh(ctx, *args); });
}

}  // namespace kerncast::cli
