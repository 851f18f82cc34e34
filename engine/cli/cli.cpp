#include "engine/cli/cli.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace kerncast::cli {

std::string resources_dir() {
    if (const char* env = std::getenv("KERNCAST_RESOURCES"); env && *env)
        return env;
    // Next to an installed binary first, then the source tree this binary was built from.
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto installed = exe.parent_path().parent_path() / "share" / "kerncast" / "resources";
        if (std::filesystem::is_directory(installed))
            return installed.string();
    }
    return std::string(KERNCAST_SOURCE_DIR) + "/resources";
}

int run(int argc, char** argv, std::ostream* out, std::ostream* err) {
    Context ctx;
    ctx.out = out ? out : &std::cout;
    ctx.err = err ? err : &std::cerr;

    CLI::App app{"Kerncast: forecast-guided search over CUDA kernels, headless.", "kerncast-cli"};
    app.set_version_flag("--version", std::string(KERNCAST_VERSION));
    app.add_flag("--json", ctx.json, "Machine-readable JSON output");
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

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e, *ctx.out, *ctx.err);
    } catch (const std::exception& e) {
        *ctx.err << "kerncast-cli: " << e.what() << "\n";
        return 1;
    }
    return ctx.exit_code;
}

}  // namespace kerncast::cli
