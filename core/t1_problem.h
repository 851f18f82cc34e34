#pragma once
// T1 problem files (the autotuning community's input format, read by Kernel Tuner's tune_kernel_T1 and BAT) as
// Kerncast problem folders (docs/formats.md "T1 problems"). The folder is a real problem: problem.json with the
// T1 arguments as buffers and scalars, family.cu with the kernel, its launch and the tunables with the T1
// conditions as where clauses, and reference.cu, the family at the T1 default configuration.
//
// The launch is the one Kernel Tuner makes from a T1 file, so that the caches measured with it describe the same
// programs: the grid is ceil(ProblemSize[d] / product of GridDiv d) (the block size name of d when GridDiv d is
// absent), the block is LocalSize, and every T1 argument is a kernel parameter in order; arguments with
// "MemType": "Constant" also fill the `__constant__` variable of their name.

#include "core/expr.h"

#include <string>
#include <vector>

namespace kerncast {

struct T1ImportOptions {
    std::string kernel_file;    // the kernel source to use instead of the file's KernelFile ("" = KernelFile)
    std::string name;           // the problem's name ("" = the file's BenchmarkName)
    Bindings reference_config;  // overrides the T1 default configuration (a subset of the tunables)
};

struct T1Problem {
    std::string name;
    std::string problem_json;  // problem.json's text
    std::string family;        // family.cu
    std::string reference;     // reference.cu
    Bindings reference_configuration;
    std::string kernel_file;         // the source file that was read
    size_t configurations = 0;       // valid configurations of the family
    std::vector<std::string> notes;  // what the import decided that a reader should know (printed by the CLI)
};

// Reads a T1 file and its kernel. Throws Error naming the file, the JSON pointer or line, and what was expected:
// a language other than CUDA (with what to do), a HIP source, values that are not integers, a condition over
// unknown names, an argument type Kernel Tuner's T1 reader does not support, a buffer whose size depends on a
// tunable, no valid configuration.
T1Problem import_t1(const std::string& t1_path, const T1ImportOptions& options = {});

// Writes problem.json, family.cu and reference.cu into `folder` (created; existing files of those names are
// replaced, nothing else is touched).
void write_t1_problem(const T1Problem& problem, const std::string& folder);

// The integer list a T1 "Values" string denotes: Python list displays, `range(...)`, `list(range(...))`, list
// comprehensions over a range or a list (`[2**i for i in range(0, 6)]`, with an optional `if`), and `+` between
// lists. Throws Error for anything else (a float, a string, a call other than range/list).
std::vector<int64_t> t1_values(const std::string& text, const SourceLocation& where = {});

}  // namespace kerncast
