#pragma once
// `kerncast-cli import --t1`: a T1 problem file as a problem folder (core/t1_problem.h).

#include "engine/cli/cli.h"

#include <string>
#include <vector>

namespace kerncast::cli {

struct T1ImportArgs {
    std::string t1;                      // the T1 file
    std::string out;                     // the problem folder to write
    std::string kernel_file;             // instead of the file's KernelFile
    std::string name;                    // instead of its BenchmarkName
    std::vector<std::string> reference;  // NAME=VALUE overrides of the default configuration
};

// Throws Error (the caller reports it) for a file that cannot be imported.
void run_t1_import(Context& ctx, const T1ImportArgs& args);

}  // namespace kerncast::cli
