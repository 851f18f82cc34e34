#pragma once
// A found kernel as code a project can use (docs/formats.md "Exporting a kernel"): the kernel program with its
// tunables fixed, compiled by nvcc as an ordinary CUDA unit, and a host launch function that runs its launch plan
// (grid, block and shared memory computed from the sizes by the plan's expressions translated to C++, scratch
// buffers from the caller or allocated on the stream, constant memory filled, errors returned). The torch format adds
// a PyTorch extension whose Python function takes and returns tensors as the problem's `pytorch` expression does, and
// a script that checks and times it against that expression.

#include "core/expr.h"
#include "core/kernel_program.h"
#include "core/problem.h"

#include <optional>
#include <string>
#include <vector>

namespace kerncast {

// Where the exported kernel came from, for the unit's README and its header comment.
struct ExportProvenance {
    std::string source;  // e.g. "candidate 42 (family BLOCK=256) of run 3 in softmax.kcrun", or the kernel file
    std::optional<double> speedup;       // measured against the problem's reference
    std::optional<double> candidate_us;  // its measured median at the benchmark size
    std::optional<double> reference_us;
    std::string device;               // the device it was measured on
    std::string problem_fingerprint;  // of the problem definition it was measured against
};

struct KernelExportOptions {
    // The C++ namespace everything of the unit lives in (kernels, constants, launch function), so that two exported
    // kernels, or two configurations of one, can be compiled into one program; default kerncast_<problem>.
    std::string name_space;
    // File names: <unit>.h, <unit>.cu (and for torch <unit>_op.cu, <unit>.py, test_<unit>.py); default the problem.
    std::string unit;
    ExportProvenance provenance;
};

struct ExportedFile {
    std::string path;  // relative to the output folder
    std::string text;
};

// The CUDA unit: <unit>.h (the launch function), <unit>.cu (the kernel and the launch function) and README.md.
// `program` is the kernel program (its source with the @kerncast lines); `tunables` a valid configuration of it.
// Throws Error when the program does not fit the problem (KernelProgram::validate) or the tunables are not valid.
std::vector<ExportedFile> export_cuda(const Problem& problem, const KernelProgram& program, const Bindings& tunables,
                                      KernelExportOptions options);

// export_cuda's files and the PyTorch extension: <unit>_op.cu (the op, torch::Tensor in and out), <unit>.py (the
// Python wrapper: load() builds the extension with torch.utils.cpp_extension.load, forward(...) takes the problem's
// input tensors and returns its outputs) and test_<unit>.py (checks forward against the `pytorch` expression at
// every correctness size and the benchmark size, and times both). Throws Error when the problem has no `pytorch`
// expression.
std::vector<ExportedFile> export_torch(const Problem& problem, const KernelProgram& program, const Bindings& tunables,
                                       KernelExportOptions options);

// Checks that the tunables are a configuration of the program: every tunable given, none unknown, each value allowed
// and every where condition true. Throws Error naming what is wrong.
void check_configuration(const KernelProgram& program, const Bindings& tunables);

// A C++ identifier from a problem or file name ("log-softmax 2" -> "log_softmax_2").
std::string cpp_identifier(const std::string& name);
// The C++ element type of a buffer of this dtype in exported code ("float", "__half", ...).
const char* cpp_type(DType t);

}  // namespace kerncast
