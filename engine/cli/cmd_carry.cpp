// kerncast-cli carry --problem P --family-was FILE [--recordings DIR] [--dry-run]: after a family's tunable lines
// changed (a value added, a where-condition relaxed), re-keys every recording of the problem under DIR (default: the
// library's recordings, one folder per device) from the family as it was to the family as it is, so that the
// configurations both spaces hold stay recorded on GPUs that are not at hand to record them again. Nothing is measured.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/replay/recording_carry.h"

#include "core/error.h"
#include "core/problem.h"
#include "core/problem_fingerprint.h"
#include "core/text_util.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct CarryArgs {
    std::string problem;
    std::string family_was;
    std::string recordings;
    bool dry_run = false;
};

void run_carry(Context& ctx, const CarryArgs& a) {
    try {
        const std::string dir = resolve_problem_dir(a.problem);
        const Problem problem = Problem::load(dir);
        const fs::path family = fs::path(dir) / "family.cu";
        if (!fs::exists(family))
            throw Error("problem '" + problem.name + "' has no family.cu: there is nothing to carry over");
        const std::string current = read_text_file(family.string(), "the family");
        const std::string earlier = read_text_file(a.family_was, "the earlier family");
        const std::string fingerprint = problem_fingerprint(dir);
        const std::vector<std::string> files = problem_recordings(recordings_root(a.recordings), problem.name);

        nlohmann::json report = nlohmann::json::array();
        for (const auto& file : files) {
            const CarryOutcome o = carry_recording(file, problem.name, fingerprint, current, earlier, a.dry_run);
            report.push_back({{"file", o.file},
                              {"carried", o.carried},
                              {"already", o.already},
                              {"outside", o.outside},
                              {"other", o.other}});
            if (!ctx.json)
                *ctx.out << o.file << ": " << o.carried
                         << (a.dry_run ? " configuration(s) would be carried over, "
                                       : " configuration(s) carried over, ")
                         << o.already << " current already, " << o.outside << " no longer in the space (kept), "
                         << o.other << " other program(s) kept\n";
        }
        if (ctx.json)
            *ctx.out << nlohmann::json{{"ok", true},
                                       {"problem", problem.name},
                                       {"dry_run", a.dry_run},
                                       {"recordings", report}}
                            .dump(2)
                     << "\n";
    } catch (const std::exception& e) {
        report_failure(ctx, "carry", e.what());
    }
}

}  // namespace

void add_carry_command(CLI::App& app, Context& ctx) {
    auto args = std::make_shared<CarryArgs>();
    auto* cmd = app.add_subcommand(
        "carry", "Carry a problem's recordings over to its family after only the family's tunable lines changed: "
                 "the configurations both spaces hold stay recorded (nothing is measured)");
    cmd->add_option("--problem", args->problem, "Problem name (under resources/problems) or folder")->required();
    cmd->add_option("--family-was", args->family_was,
                    "The family as it was recorded, e.g. from `git show REV:resources/problems/P/family.cu`")
        ->required();
    cmd->add_option("--recordings", args->recordings,
                    "Recordings folder, one subfolder per device (default: the library's recordings)");
    cmd->add_flag("--dry-run", args->dry_run, "Say what would be carried over; write nothing");
    cmd->callback([&ctx, args] { run_carry(ctx, *args); });
}

}  // namespace kerncast::cli
