#pragma once
// kerncast-cli: the headless front end. Each subcommand lives in its own cmd_<name>.cpp and registers itself here.

#include <iosfwd>
#include <string>

// CLI11 itself is included by the files that define commands only: with its validators it adds about 7 s of
// compiling at -O2 to every file that includes it.
namespace CLI {
class App;
}

namespace kerncast::cli {

struct Context {
    bool json = false;  // --json: machine-readable output on stdout
    int exit_code = 0;  // set by the subcommand's callback
    std::ostream* out = nullptr;
    std::ostream* err = nullptr;
};

// Runs the CLI; returns the process exit code. out/err default to std::cout/std::cerr.
int run(int argc, char** argv, std::ostream* out = nullptr, std::ostream* err = nullptr);

// The resource folder (problems/, recordings/, prompts/): the folder given with --resources, else
// <prefix>/share/kerncast beside an installed binary, else $KERNCAST_RESOURCES, else the source tree's resources/
// for a binary in its build tree; "" when none applies.
std::string resources_dir();
// What --resources sets for this process ("" clears it).
void set_resources_dir(const std::string& dir);
// Empty when the problem library is where resources_dir() says; else a line that says where it was looked for and
// what to set (a program copied away from its install and build trees).
std::string missing_resources_note();

// Registration functions, one per cmd_*.cpp.
void add_devices_command(CLI::App& app, Context& ctx);
void add_problems_command(CLI::App& app, Context& ctx);
void add_measure_command(CLI::App& app, Context& ctx);
void add_forecast_command(CLI::App& app, Context& ctx);
void add_evaluate_command(CLI::App& app, Context& ctx);
void add_search_command(CLI::App& app, Context& ctx);
void add_record_command(CLI::App& app, Context& ctx);
void add_export_command(CLI::App& app, Context& ctx);
void add_selftest_command(CLI::App& app, Context& ctx);
void add_import_command(CLI::App& app, Context& ctx);
void add_review_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_prepare_command(CLI::App& app, Context& ctx);
void add_carry_command(CLI::App& app, Context& ctx);
void add_refresh_static_command(CLI::App& app, Context& ctx);

}  // namespace kerncast::cli
