#pragma once
// Kernel programs (docs/formats.md "Kernel program"): CUDA device code plus a launch plan in `// @kerncast` lines.

#include "core/error.h"
#include "core/expr.h"
#include "core/problem.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

// A TMA tensor map over a buffer or scratch buffer, written in args(...) as
// `tensormap(<buffer>, shape(<d0>, ...), box(<b0>, ...)[, swizzle(<bytes>)])`: the worker builds it with
// cuTensorMapEncodeTiled and passes its 128 bytes by value, for a `const __grid_constant__ CUtensorMap` parameter.
// Dimensions are innermost (contiguous) first, the strides those of the dense array.
struct TensorMapSpec {
    std::string buffer;
    std::vector<Expr> shape;  // elements per dimension, 1 to 5 of them
    std::vector<Expr> box;    // elements one copy moves per dimension, as many as shape
    int swizzle = 0;          // bytes: 0 (none), 32, 64 or 128
};

struct LaunchSpec {
    std::string kernel;
    std::array<Expr, 3> grid, block;             // missing dimensions are the constant 1
    std::array<Expr, 3> cluster;                 // thread-block cluster; the constants 1 when absent
    Expr smem;                                   // dynamic shared memory bytes; constant 0 when absent
    Expr when;                                   // the launch is part of the plan only where this holds; empty: always
    std::vector<std::string> args;               // names; a tensor map's whole text, with its spec in tensormaps
    std::map<size_t, TensorMapSpec> tensormaps;  // by index into args
    int line = 0;

    bool hasCluster() const;
};

struct ScratchSpec {
    std::string name;
    DType dtype = DType::F32;
    Expr count;  // elements
    int line = 0;
};

// A `__constant__` symbol of the program filled from a problem buffer before every run (`// @kerncast constant
// <symbol> <buffer>`): the worker copies the buffer's bytes into the module's symbol, so the kernel reads the same
// values from constant memory that it may also get as a pointer argument.
struct ConstantSpec {
    std::string symbol;
    std::string buffer;
    int line = 0;
};

struct Tunable {
    std::string name;
    std::vector<int64_t> values;
    Expr where;  // empty when unconstrained
    int line = 0;
};

struct ResolvedTensorMap {
    std::string buffer;
    bool scratch = false;         // a scratch buffer of the program, not a problem buffer
    DType dtype = DType::F16;     // the buffer's
    std::vector<uint64_t> shape;  // innermost first
    std::vector<uint32_t> box;
    int swizzle = 0;
};

struct ResolvedArg {
    enum class Kind { Buffer, Scratch, Scalar, Size, TensorMap } kind = Kind::Buffer;
    std::string name;             // for a tensor map, its buffer
    ResolvedTensorMap tensormap;  // TensorMap
    DType dtype = DType::I32;     // buffers, scratch and scalars: their dtype; sizes: i32
    double scalar_value = 0;      // Scalar
    int64_t size_value = 0;       // Size (fits in int32)
};

struct ResolvedLaunch {
    std::string kernel;
    std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
    std::array<uint32_t, 3> cluster{1, 1, 1};
    uint32_t smem = 0;
    std::vector<ResolvedArg> args;
    int line = 0;
};

struct ResolvedScratch {
    std::string name;
    DType dtype = DType::F32;
    int64_t elements = 0;
};

// The most tunable assignments configurations() examines before it gives up with an error.
inline constexpr uint64_t kMaxEnumerationSteps = 2'000'000;

// The most blocks a cluster may have: 8 run everywhere clusters do, up to 16 where the device allows non-portable
// sizes (Hopper).
inline constexpr int64_t kMaxClusterBlocks = 16;

struct KernelProgram {
    std::string file;    // shown in errors
    std::string source;  // the whole file, as compiled
    // `// @kerncast target sm_90a [sm_100a ...]`: architectures with features the code needs (wgmma, setmaxnreg
    // need sm_90a); the device's is compiled when none is given.
    std::vector<std::string> targets;
    int targets_line = 0;
    std::vector<LaunchSpec> launches;
    std::vector<ScratchSpec> scratch;
    std::vector<ConstantSpec> constants;
    std::vector<Tunable> tunables;
    // When set, the only configurations that count as valid (isValid, configurations() and the counts), e.g. those a
    // partial recording holds for a search on the replay device. Not read from the file.
    std::optional<std::set<Bindings>> only;

    // Reads the @kerncast lines. Throws Error "file:line: ..." on syntax errors (unknown directive, bad expression
    // with its column, missing args(), duplicate or empty tunable, ...). Does not check names against a problem.
    static KernelProgram parse(const std::string& source, const std::string& file_name);
    static KernelProgram load(const std::string& path);

    // Checks the plan against a problem: every name exists (buffers, scratch, scalars, sizes, tunables), no name
    // is declared twice, launched kernels are __global__ functions in the source, at least one launch.
    void validate(const Problem& problem) const;
    // Like validate() but collects every problem instead of throwing the first.
    std::vector<Error> validationErrors(const Problem& problem) const;

    // True when every tunable is given, each value is one of its allowed values, every where-condition holds, and
    // the configuration is one of `only` when that is set.
    bool isValid(const Bindings& tunables) const;
    // Every valid combination, in a stable order (first tunable varies slowest, values in declared order); at most
    // `limit` of them. One empty configuration when there are no tunables. Where conditions are checked as soon as
    // the tunables they read have values, so that ruled-out subtrees are skipped; a walk that would take more than
    // kMaxEnumerationSteps steps throws Error (file:line of the first tunable) instead of running for hours.
    std::vector<Bindings> configurations(size_t limit = 1000000) const;
    // Number of valid configurations (up to limit), without keeping them; throws as configurations() does.
    size_t configurationCount(size_t limit = 1000000) const;
    // What `problems validate` compiles: every configuration when there are at most `all_up_to`, else a sample in
    // which every value of every tunable appears (that some valid configuration uses).
    std::vector<Bindings> compileCheckConfigurations(size_t all_up_to = 64) const;

    // Evaluates the launch plan for one case and one configuration: the launches whose when(...) holds, in order.
    // Throws Error "file:line: ..." when none does, for a grid or
    // block dimension <= 0 or over the hardware limits, more than 1024 threads per block, a size argument over
    // INT32_MAX, an unknown or invalid tunable.
    std::vector<ResolvedLaunch> resolve(const Problem& problem, const Bindings& sizes, const Bindings& tunables) const;
    std::vector<ResolvedScratch> resolveScratch(const Problem& problem, const Bindings& sizes,
                                                const Bindings& tunables) const;

    // The architecture to compile for on a device of `device_arch` ("sm_90"): the target with the device's number,
    // or the device's own when the program names none. Throws Error (file:line of the target line) when the
    // program's targets leave out the device.
    std::string compileArch(const std::string& device_arch) const;
    // True when some launch passes a tensor map.
    bool usesTensorMaps() const;

    // Kernel names in launch order, without repeats.
    std::vector<std::string> kernelNames() const;
    const Tunable* tunable(const std::string& name) const;
};

}  // namespace kerncast
