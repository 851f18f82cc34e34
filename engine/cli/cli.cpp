#include "engine/cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace kerncast::cli {

namespace {
constexpr int kUsageExit = 2;
std::string g_resources;  // --resources
}  // namespace

void set_resources_dir(const std::string& dir) { g_resources = dir; }

std::string resources_dir() {
    namespace fs = std::filesystem;
    if (!g_resources.empty())
        return g_resources;
    // 1. An installed tree: <prefix>/bin/kerncast-cli finds <prefix>/share/kerncast, wherever the prefix was moved.
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path installed = ec ? fs::path() : exe.parent_path().parent_path() / "share" / "kerncast";
    if (!installed.empty() && fs::is_directory(installed / "problems"))
        return installed.string();
    // 2. Where the user points.
    if (const char* env = std::getenv("KERNCAST_RESOURCES"); env && *env)
        return env;
    // 3. A binary still in the build tree it was built in uses the source tree's resources.
    if (!ec) {
        const fs::path build = fs::weakly_canonical(KERNCAST_BUILD_DIR, ec);
        const fs::path here = fs::weakly_canonical(exe, ec);
        const auto mismatch = std::mismatch(build.begin(), build.end(), here.begin(), here.end());
        if (!ec && mismatch.first == build.end())
            return std::string(KERNCAST_SOURCE_DIR) + "/resources";
    }
    return installed.string();  // where an installed tree would hold them, so that errors say where we looked
}

std::string missing_resources_note() {
    const std::string where = resources_dir();
    if (std::filesystem::is_directory(where + "/problems"))
        return {};
    if (!g_resources.empty())
        return "kerncast-cli: --resources " + where + " holds no problems/ folder\n";
    if (const char* env = std::getenv("KERNCAST_RESOURCES"); env && *env)
        return "kerncast-cli: KERNCAST_RESOURCES is " + where + ", which holds no problems/ folder\n";
    return "kerncast-cli: the problem library was not found: looked in " + where +
           " (next to the program) and in the build tree; set KERNCAST_RESOURCES to the folder that holds problems/ "
           "and recordings/\n";
}

int run(int argc, char** argv, std::ostream* out, std::ostream* err) {
    Context ctx;
    ctx.out = out ? out : &std::cout;
    ctx.err = err ? err : &std::cerr;

    CLI::App app{"Kerncast: forecast-guided search over CUDA kernels, headless.", "kerncast-cli"};
    app.set_version_flag("--version", std::string(KERNCAST_VERSION));
    app.add_flag("--json", ctx.json, "Machine-readable JSON output");
    set_resources_dir("");
    app.add_option_function<std::string>(
           "--resources", [](const std::string& dir) { set_resources_dir(dir); },
           "The folder holding problems/ and recordings/ (default: beside the program, $KERNCAST_RESOURCES, or the "
           "source tree's resources/ for a program in its build tree)")
        ->check(CLI::ExistingDirectory);
    app.require_subcommand(1);
    app.fallthrough();

    add_devices_command(app, ctx);
    add_problems_command(app, ctx);
    add_measure_command(app, ctx);
    add_forecast_command(app, ctx);
    add_evaluate_command(app, ctx);
    add_search_command(app, ctx);
    add_record_command(app, ctx);
    add_export_command(app, ctx);
    add_import_command(app, ctx);
    add_selftest_command(app, ctx);
    add_review_command(app, ctx);
    add_sweep_command(app, ctx);
    add_prepare_command(app, ctx);
    add_carry_command(app, ctx);
    add_refresh_static_command(app, ctx);

    // The first word that is not an option names the command; CLI11 alone would only say that one is required.
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--resources") {
            ++i;  // its folder is not a command
            continue;
        }
        if (word.empty() || word[0] == '-')
            continue;
        bool known = false;
        std::string names;
        const CLI::App& root = app;
        for (const CLI::App* sub : root.get_subcommands([](const CLI::App*) { return true; })) {
            known = known || sub->get_name() == word;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (!known) {
            *ctx.err << "kerncast-cli: unknown command '" << word << "'; expected one of: " << names
                     << "\nRun with --help for more information.\n";
            return kUsageExit;
        }
        break;
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are successes; every usage error exits 2 (the shell convention) with CLI11's
        // message, rather than CLI11's own 100+ codes.
        const int code = app.exit(e, *ctx.out, *ctx.err);
        return code == 0 ? 0 : kUsageExit;
    } catch (const std::exception& e) {
        *ctx.err << "kerncast-cli: " << e.what() << "\n";
        *ctx.err << missing_resources_note();
        return 1;
    }
    return ctx.exit_code;
}

}  // namespace kerncast::cli
