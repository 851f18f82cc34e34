// kerncast-cli import --t1 FILE.json --out DIR [--kernel-file F] [--name N] [--tunable NAME=V ...]: a T1 problem
// file (benchmark_hub, Kernel Tuner's tune_kernel_T1) and its kernel as a Kerncast problem folder.

#include "engine/cli/cmd_import_t1.h"

#include "core/kernel_program.h"
#include "core/problem_library.h"
#include "core/t1_problem.h"
#include "engine/cli/problem_arg.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <ostream>

namespace kerncast::cli {

void run_t1_import(Context& ctx, const T1ImportArgs& args) {
    if (args.out.empty())
        throw Error("--t1 needs --out DIR (the problem folder to write)");
    T1ImportOptions options;
    options.kernel_file = args.kernel_file;
    options.name = args.name;
    options.reference_config = parse_tunables(args.reference, "--reference-config");
    const T1Problem imported = import_t1(args.t1, options);
    write_t1_problem(imported, args.out);
    // What was written is read back as any problem folder is, so that an import never leaves a folder the
    // library would refuse.
    const ProblemBundle bundle = load_problem_folder(args.out);
    if (ctx.json) {
        *ctx.out << nlohmann::json{{"ok", true},
                                   {"t1", args.t1},
                                   {"kernel_file", imported.kernel_file},
                                   {"problem", bundle.problem.name},
                                   {"folder", args.out},
                                   {"configurations", imported.configurations},
                                   {"reference_configuration", imported.reference_configuration},
                                   {"notes", imported.notes}}
                        .dump(2)
                 << "\n";
        return;
    }
    *ctx.out << "Wrote " << args.out << ": problem " << bundle.problem.name << " (kernel "
             << std::filesystem::path(imported.kernel_file).filename().string() << ", " << imported.configurations
             << " valid configurations; the reference is " << nlohmann::json(imported.reference_configuration).dump()
             << ").\n";
    for (const auto& note : imported.notes)
        *ctx.out << "  note: " << note << "\n";
    *ctx.out << "Check it with: kerncast-cli problems validate " << args.out << "\n";
}

}  // namespace kerncast::cli
