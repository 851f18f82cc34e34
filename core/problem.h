#pragma once
// problem.json (docs/formats.md "Problem folder"): what is computed, on which sizes, how it is checked and how much
// work it is.

#include "core/error.h"
#include "core/expr.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kerncast {

enum class DType { F32, F16, BF16, F64, I32, U8 };
size_t dtype_size(DType t);
const char* to_string(DType t);                                                   // "f32", "f16", ...
DType dtype_from_string(const std::string& s, const SourceLocation& where = {});  // throws Error listing the names
bool is_integer(DType t);

enum class Role { In, Out, InOut };
const char* to_string(Role r);  // "in", "out", "inout"
Role role_from_string(const std::string& s, const SourceLocation& where = {});

struct InitSpec {
    std::string dist = "uniform";  // "uniform" | "normal" | "randint"
    double lo = -1, hi = 1;        // uniform bounds
    double mean = 0, std = 1;      // normal
    Expr lo_expr, hi_expr;         // randint bounds (inclusive lo, exclusive hi), may name sizes
};

struct BufferSpec {
    std::string name;
    DType dtype = DType::F32;
    std::vector<Expr> shape;
    Role role = Role::In;
    InitSpec init;
    int line = 0;  // line of the buffer's entry in problem.json

    // Product of the shape for these sizes; throws Error when a dimension is negative or the product overflows.
    int64_t elements(const Bindings& sizes) const;
    int64_t bytes(const Bindings& sizes) const { return elements(sizes) * static_cast<int64_t>(dtype_size(dtype)); }
};

struct ScalarSpec {
    std::string name;
    DType dtype = DType::F32;  // f32, f64 or i32
    double value = 0;
    int line = 0;
};

struct Tolerance {
    double rtol = 1e-5;
    double atol = 1e-6;
    bool scale_atol_by_rms = true;
};

struct Problem {
    std::string name, description;
    std::string dir;   // the problem folder ("" when parsed from text)
    std::string file;  // path of problem.json as given, used in error messages
    Bindings benchmark;
    std::vector<Bindings> correctness;
    // Per correctness case (same length as `correctness`): input distributions that replace the buffers' own for
    // that case, e.g. large logits for a softmax. Empty maps where a case gives none.
    std::vector<std::map<std::string, InitSpec>> correctness_init;
    std::vector<BufferSpec> buffers;
    std::vector<ScalarSpec> scalars;
    Tolerance tolerance;
    Expr flops, bytes;
    std::string reference_file = "reference.cu";  // relative to dir
    std::string pytorch;                          // optional equivalent PyTorch eager expression
    Bindings reference_configuration;  // the family configuration the reference is, when it is one (else empty)
    std::string json_text;             // the original text (the worker re-parses it)

    // Parses and validates. Throws Error "file:line: what: expected ..., found ..." at the offending field.
    static Problem parse(const std::string& json_text, const std::string& file_name);
    // Best effort: appends every error found to `errors` instead of throwing (for `problems validate`).
    static Problem parse(const std::string& json_text, const std::string& file_name, std::vector<Error>& errors);
    // A problem.json path or its folder.
    static Problem load(const std::string& path);
    static Problem load(const std::string& path, std::vector<Error>& errors);

    const BufferSpec* buffer(const std::string& name) const;
    const ScalarSpec* scalar(const std::string& name) const;
    // The size names every case defines (those of the benchmark case).
    std::vector<std::string> sizeNames() const;
    // Correctness cases then the benchmark case.
    std::vector<Bindings> allCases() const;
    // Absolute-ish path of the reference kernel program (dir + "/" + reference_file).
    std::string referencePath() const;
};

}  // namespace kerncast
