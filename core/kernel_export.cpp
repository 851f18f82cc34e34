#include "core/kernel_export.h"

#include "core/expr_cpp.h"
#include "core/text_util.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

namespace kerncast {

const char* cpp_type(DType t) {
    switch (t) {
    case DType::F32:
        return "float";
    case DType::F16:
        return "__half";
    case DType::BF16:
        return "__nv_bfloat16";
    case DType::F64:
        return "double";
    case DType::I32:
        return "int32_t";
    case DType::U8:
        return "uint8_t";
    }
    return "float";
}

namespace {

// A C++ string literal of any text (the expressions quoted in error messages).
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string scalar_literal(const ScalarSpec& s) {
    if (s.dtype == DType::I32)
        return std::to_string(static_cast<int64_t>(s.value));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", s.value);
    std::string v = buf;
    if (v.find_first_of(".eEn") == std::string::npos)
        v += ".0";
    return s.dtype == DType::F32 ? v + "f" : v;
}

std::string describe_tunables(const Bindings& tunables) {
    std::string out;
    for (const auto& [k, v] : tunables)
        out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return out.empty() ? "none" : out;
}

// The kernel source made fit for a namespace in an ordinary C++ translation unit: its #include lines go to the top
// of the file (a header cannot be included inside a namespace), `extern "C"` is dropped (C linkage would make two
// units' kernels of one name clash; the launch function calls the kernel in the same unit, so no one looks it up by
// name), and the macros it defines are named so that they can be undefined after it. Lines keep their numbers.
struct KernelText {
    std::vector<std::string> includes;
    std::string body;
    std::vector<std::string> macros;
};

KernelText prepare_kernel_text(const std::string& source) {
    KernelText out;
    static const std::regex include_line(R"(^\s*#\s*include\s*[<"].*)");
    static const std::regex define_line(R"(^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*))");
    static const std::regex extern_c_block(R"(extern\s*"C"\s*\{)");
    static const std::regex extern_c(R"(extern\s*"C"\s*)");
    std::istringstream in(source);
    std::string line;
    std::set<std::string> seen;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, include_line)) {
            out.includes.push_back(trim(line));
            out.body += "\n";
            continue;
        }
        if (std::regex_search(line, m, define_line) && seen.insert(m[1]).second)
            out.macros.push_back(m[1]);
        line = std::regex_replace(line, extern_c_block, "namespace {");
        line = std::regex_replace(line, extern_c, "");
        out.body += line + "\n";
    }
    return out;
}

// Support code shared by every exported unit in a translation unit (guarded).
const char* kLaunchSupport = R"(#ifndef KERNCAST_LAUNCH_SUPPORT
#define KERNCAST_LAUNCH_SUPPORT
namespace kerncast_launch {

// A device pointer that converts to whatever pointer type the kernel's parameter has (float*, const float4*, ...).
struct DevicePointer {
    void* p;
    template<class T>
    operator T*() const { return static_cast<T*>(p); }
};
inline DevicePointer pointer(const void* p) { return DevicePointer{const_cast<void*>(p)}; }

inline cudaError_t fail(const char** message, const char* why) {
    if (message)
        *message = why;
    return cudaErrorInvalidValue;
}
inline cudaError_t cuda_failed(const char** message, cudaError_t error) {
    if (message && error != cudaSuccess)
        *message = cudaGetErrorString(error);
    return error;
}
inline bool within(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }
inline size_t aligned(int64_t bytes) { return (static_cast<size_t>(bytes) + 255) / 256 * 256; }

}  // namespace kerncast_launch
#endif  // KERNCAST_LAUNCH_SUPPORT
)";

struct Unit {
    const Problem& problem;
    const KernelProgram& program;
    const Bindings& tunables;
    const KernelExportOptions& options;

    std::vector<std::string> sizes() const { return problem.sizeNames(); }

    std::string sizeParams() const {
        std::string out;
        for (const auto& s : sizes())
            out += (out.empty() ? "" : ", ") + std::string("int64_t ") + s;
        return out;
    }
    std::string sizeArgs() const { return join(sizes()); }

    std::string launchParams(bool defaults) const {
        std::vector<std::string> p;
        for (const auto& b : problem.buffers)
            p.push_back(std::string(b.role == Role::In ? "const " : "") + cpp_type(b.dtype) + "* " + b.name);
        for (const auto& s : sizes())
            p.push_back("int64_t " + s);
        for (const auto& s : problem.scalars)
            p.push_back(std::string(cpp_type(s.dtype)) + " " + s.name + (defaults ? " = " + scalar_literal(s) : ""));
        p.push_back(std::string("cudaStream_t stream") + (defaults ? " = nullptr" : ""));
        p.push_back(std::string("void* workspace") + (defaults ? " = nullptr" : ""));
        p.push_back(std::string("const char** message") + (defaults ? " = nullptr" : ""));
        return join(p);
    }

    std::string cpp(const Expr& e) const { return expr_to_cpp(e, "kc_status"); }

    std::string bufferBytes(const BufferSpec& b) const {
        std::string text;
        for (const auto& d : b.shape)
            text += (text.empty() ? "(" : " * (") + d.text() + ")";
        text = "(" + (text.empty() ? std::string("1") : text) + ") * " + std::to_string(dtype_size(b.dtype));
        return cpp(Expr::parse(text));
    }

    bool uses(DType t) const {
        for (const auto& b : problem.buffers)
            if (b.dtype == t)
                return true;
        for (const auto& s : program.scratch)
            if (s.dtype == t)
                return true;
        return false;
    }

    std::string header() const {
        const std::string& ns = options.name_space;
        std::ostringstream h;
        h << "#pragma once\n"
          << "// " << problem.name << ": " << problem.description << "\n"
          << "// Exported by Kerncast from " << options.provenance.source << "\n"
          << "// Tunables: " << describe_tunables(tunables) << ". See README.md.\n\n"
          << "#include <cstddef>\n#include <cstdint>\n\n#include <cuda_runtime.h>\n";
        if (uses(DType::F16))
            h << "#include <cuda_fp16.h>\n";
        if (uses(DType::BF16))
            h << "#include <cuda_bf16.h>\n";
        h << "\nnamespace " << ns << " {\n\n// The configuration the kernel is compiled with.\n";
        for (const auto& [k, v] : tunables)
            h << "inline constexpr int64_t " << k << " = " << v << ";\n";
        h << "\n// Device memory the launch plan uses between its launches (its scratch buffers), in bytes, at these "
             "sizes;\n// 0 when it needs none or the sizes are not valid for the plan (then *message says why).\n"
          << "size_t workspace_bytes(" << sizeParams() << (sizes().empty() ? "" : ", ")
          << "const char** message = nullptr);\n\n"
          << "// Runs the kernel program on `stream`: the launches of its plan, in order. Buffers are device "
             "pointers:\n";
        for (const auto& b : problem.buffers) {
            std::vector<std::string> dims;
            for (const auto& d : b.shape)
                dims.push_back(d.text());
            h << "//   " << b.name << "  " << to_string(b.dtype) << " [" << join(dims) << "] " << to_string(b.role)
              << (b.role == Role::Out ? " (every element is written)" : "") << "\n";
        }
        h << "// `workspace` holds at least workspace_bytes(...) bytes of device memory, or is nullptr: then the "
             "scratch\n// buffers are allocated and freed on the stream (cudaMallocAsync). Returns cudaSuccess or the "
             "first error:\n// cudaErrorInvalidValue when the sizes do not fit the launch plan, a CUDA error "
             "otherwise; "
             "*message (when\n// given) says why. Asynchronous, as a kernel launch is.\n"
          << "cudaError_t launch(" << launchParams(true) << ");\n\n}  // namespace " << ns << "\n";
        return h.str();
    }

    // The scratch buffers' offsets in the workspace and its size; a plan error leaves kc_status.error set.
    std::string workspacePlan() const {
        std::ostringstream c;
        c << "struct Workspace {\n    size_t offset[" << std::max<size_t>(1, program.scratch.size())
          << "] = {};\n    size_t bytes = 0;\n    const char* error = nullptr;\n};\n\n"
          << "Workspace plan_workspace(" << sizeParams() << ") {\n"
          << "    kerncast_expr::Status kc_status;\n    Workspace w;\n";
        for (size_t i = 0; i < program.scratch.size(); ++i) {
            const ScratchSpec& s = program.scratch[i];
            c << "    // scratch " << s.name << " " << to_string(s.dtype) << " (" << s.count.text() << ")\n"
              << "    const int64_t count_" << i << " = " << cpp(s.count) << ";\n"
              << "    if (!kc_status.error && count_" << i << " <= 0)\n"
              << "        kc_status.error = " << quoted("scratch " + s.name + " has no elements at these sizes")
              << ";\n"
              << "    w.offset[" << i << "] = w.bytes;\n"
              << "    w.bytes += kerncast_launch::aligned(kerncast_expr::mul(kc_status, count_" << i << ", "
              << dtype_size(s.dtype) << "));\n";
        }
        if (program.scratch.empty())
            c << "    (void)kc_status;\n";
        for (const auto& s : sizes())
            c << "    (void)" << s << ";\n";
        c << "    w.error = kc_status.error;\n    return w;\n}\n";
        return c.str();
    }

    std::string launchFunction() const {
        std::ostringstream c;
        c << "cudaError_t launch(" << launchParams(false) << ") {\n"
          << "    kerncast_expr::Status kc_status;\n"
          << "    const Workspace kc_workspace = plan_workspace(" << sizeArgs() << ");\n"
          << "    if (kc_workspace.error)\n        return kerncast_launch::fail(message, kc_workspace.error);\n";
        static const char* kAxis = "xyz";
        static const int64_t kGridMax[3] = {2147483647, 65535, 65535};
        static const int64_t kBlockMax[3] = {1024, 1024, 64};
        // Every launch's configuration first, so that sizes the plan rejects launch nothing.
        for (size_t i = 0; i < program.launches.size(); ++i) {
            const LaunchSpec& l = program.launches[i];
            const std::string n = std::to_string(i);
            c << "\n    // " << program.file << ":" << l.line << ": launch " << l.kernel << "\n";
            for (int d = 0; d < 3; ++d)
                c << "    const int64_t grid" << n << kAxis[d] << " = " << cpp(l.grid[d]) << ";  // "
                  << l.grid[d].text() << "\n";
            for (int d = 0; d < 3; ++d)
                c << "    const int64_t block" << n << kAxis[d] << " = " << cpp(l.block[d]) << ";  // "
                  << l.block[d].text() << "\n";
            c << "    const int64_t smem" << n << " = " << cpp(l.smem) << ";  // " << l.smem.text() << "\n"
              << "    if (kc_status.error)\n        return kerncast_launch::fail(message, kc_status.error);\n";
            for (int d = 0; d < 3; ++d) {
                c << "    if (!kerncast_launch::within(grid" << n << kAxis[d] << ", 1, " << kGridMax[d] << "))\n"
                  << "        return kerncast_launch::fail(message, "
                  << quoted(l.kernel + ": grid." + kAxis[d] + " = " + l.grid[d].text() + " is outside 1.." +
                            std::to_string(kGridMax[d]) + " at these sizes")
                  << ");\n";
                c << "    if (!kerncast_launch::within(block" << n << kAxis[d] << ", 1, " << kBlockMax[d] << "))\n"
                  << "        return kerncast_launch::fail(message, "
                  << quoted(l.kernel + ": block." + kAxis[d] + " = " + l.block[d].text() + " is outside 1.." +
                            std::to_string(kBlockMax[d]))
                  << ");\n";
            }
            c << "    if (block" << n << "x * block" << n << "y * block" << n << "z > 1024)\n"
              << "        return kerncast_launch::fail(message, "
              << quoted(l.kernel + ": more than 1024 threads per block") << ");\n"
              << "    if (!kerncast_launch::within(smem" << n << ", 0, 4294967295LL))\n"
              << "        return kerncast_launch::fail(message, "
              << quoted(l.kernel + ": smem = " + l.smem.text() + " is not a byte count at these sizes") << ");\n";
        }
        // Sizes passed to a kernel are 32-bit ints, as the worker passes them.
        std::set<std::string> size_args;
        const auto size_names = sizes();
        for (const auto& l : program.launches)
            for (const auto& a : l.args)
                if (std::find(size_names.begin(), size_names.end(), a) != size_names.end())
                    size_args.insert(a);
        for (const auto& s : size_args)
            c << "    if (!kerncast_launch::within(" << s << ", -2147483647LL - 1, 2147483647))\n"
              << "        return kerncast_launch::fail(message, "
              << quoted("size " + s + " does not fit in the 32-bit int the kernel takes") << ");\n";
        // Constant memory filled from input buffers.
        for (size_t i = 0; i < program.constants.size(); ++i) {
            const ConstantSpec& k = program.constants[i];
            const BufferSpec* b = problem.buffer(k.buffer);
            c << "    const int64_t constant" << i << "_bytes = " << bufferBytes(*b) << ";\n"
              << "    if (kc_status.error)\n        return kerncast_launch::fail(message, kc_status.error);\n"
              << "    if (constant" << i << "_bytes > static_cast<int64_t>(sizeof(" << k.symbol << ")))\n"
              << "        return kerncast_launch::fail(message, "
              << quoted("__constant__ " + k.symbol + " is smaller than buffer " + k.buffer + " at these sizes")
              << ");\n";
        }
        if (program.scratch.empty())
            c << "\n    (void)workspace;\n";
        else
            c << "\n    char* kc_scratch = static_cast<char*>(workspace);\n"
              << "    const bool kc_own_workspace = kc_scratch == nullptr;\n"
              << "    if (kc_own_workspace) {\n"
              << "        const cudaError_t e = cudaMallocAsync(reinterpret_cast<void**>(&kc_scratch), "
                 "kc_workspace.bytes, stream);\n"
              << "        if (e != cudaSuccess)\n            return kerncast_launch::cuda_failed(message, e);\n"
              << "    }\n";
        c << "    cudaError_t kc_error = cudaSuccess;\n";
        for (size_t i = 0; i < program.constants.size(); ++i) {
            const ConstantSpec& k = program.constants[i];
            c << "    if (kc_error == cudaSuccess)\n        kc_error = cudaMemcpyToSymbolAsync(" << k.symbol << ", "
              << k.buffer << ", static_cast<size_t>(constant" << i
              << "_bytes), 0, cudaMemcpyDeviceToDevice, stream);\n";
        }
        for (size_t i = 0; i < program.launches.size(); ++i) {
            const LaunchSpec& l = program.launches[i];
            const std::string n = std::to_string(i);
            std::vector<std::string> args;
            for (const auto& a : l.args) {
                if (problem.buffer(a)) {
                    args.push_back("kerncast_launch::pointer(" + a + ")");
                } else if (problem.scalar(a)) {
                    args.push_back(a);
                } else if (auto it = std::find_if(program.scratch.begin(), program.scratch.end(),
                                                  [&](const ScratchSpec& s) { return s.name == a; });
                           it != program.scratch.end()) {
                    args.push_back("kerncast_launch::pointer(kc_scratch + kc_workspace.offset[" +
                                   std::to_string(it - program.scratch.begin()) + "])");
                } else {
                    args.push_back("static_cast<int>(" + a + ")");
                }
            }
            c << "    if (kc_error == cudaSuccess && smem" << n << " > 48 * 1024)\n"
              << "        kc_error = cudaFuncSetAttribute(" << l.kernel
              << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem" << n << "));\n"
              << "    if (kc_error == cudaSuccess) {\n"
              << "        " << l.kernel << "<<<dim3(static_cast<unsigned>(grid" << n << "x), static_cast<unsigned>(grid"
              << n << "y), static_cast<unsigned>(grid" << n << "z)), dim3(static_cast<unsigned>(block" << n
              << "x), static_cast<unsigned>(block" << n << "y), static_cast<unsigned>(block" << n
              << "z)), static_cast<size_t>(smem" << n << "), stream>>>(" << join(args) << ");\n"
              << "        kc_error = cudaGetLastError();\n    }\n";
        }
        if (!program.scratch.empty())
            c << "    if (kc_own_workspace) {\n        const cudaError_t e = cudaFreeAsync(kc_scratch, stream);\n"
              << "        if (kc_error == cudaSuccess)\n            kc_error = e;\n    }\n";
        for (const auto& s : problem.scalars)
            c << "    (void)" << s.name << ";\n";
        for (const auto& b : problem.buffers)
            c << "    (void)" << b.name << ";\n";
        c << "    return kerncast_launch::cuda_failed(message, kc_error);\n}\n";
        return c.str();
    }

    std::string source() const {
        const std::string& ns = options.name_space;
        const KernelText k = prepare_kernel_text(program.source);
        std::ostringstream c;
        c << "// " << problem.name << " (" << options.provenance.source << "), tunables " << describe_tunables(tunables)
          << ".\n// Build: nvcc -std=c++17 -arch=sm_90 -c " << options.unit << ".cu (see README.md).\n";
        for (const auto& inc : k.includes)
            c << inc << "\n";
        c << "#include \"" << options.unit << ".h\"\n\n" << expr_cpp_support() << "\n" << kLaunchSupport << "\n";
        c << "// The tunables, as the kernel was compiled with them in Kerncast (-D NAME=value).\n";
        for (const auto& [name, value] : tunables)
            c << "#define " << name << " " << value << "\n";
        c << "\nnamespace " << ns << " {\n#line 1 " << quoted(program.file) << "\n"
          << k.body << "}  // namespace " << ns << "\n\n";
        std::set<std::string> undefined;
        for (const auto& [name, value] : tunables)
            if (undefined.insert(name).second)
                c << "#undef " << name << "\n";
        for (const auto& m : k.macros)
            if (undefined.insert(m).second)
                c << "#undef " << m << "\n";
        c << "\nnamespace " << ns << " {\n\nnamespace {\n\n"
          << workspacePlan() << "\n}  // namespace\n\n"
          << "size_t workspace_bytes(" << sizeParams() << (sizes().empty() ? "" : ", ") << "const char** message) {\n"
          << "    const Workspace w = plan_workspace(" << sizeArgs() << ");\n"
          << "    if (w.error && message)\n        *message = w.error;\n"
          << "    return w.error ? 0 : w.bytes;\n}\n\n"
          << launchFunction() << "\n}  // namespace " << ns << "\n";
        return c.str();
    }

    std::string readme() const {
        const ExportProvenance& p = options.provenance;
        std::ostringstream r;
        r << "# " << problem.name << " kernel, exported by Kerncast\n\n"
          << problem.description << "\n\n"
          << "| | |\n|---|---|\n"
          << "| source | " << p.source << " |\n"
          << "| tunables | " << describe_tunables(tunables) << " |\n";
        if (p.speedup) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.3fx", *p.speedup);
            r << "| measured speedup | " << buf << " over the problem's reference |\n";
        } else {
            r << "| measured speedup | none: not measured correct on a device |\n";
        }
        if (p.candidate_us && p.reference_us) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%.2f us (reference %.2f us)", *p.candidate_us, *p.reference_us);
            r << "| time at the benchmark size | " << buf << " |\n";
        }
        std::string bench;
        for (const auto& [k, v] : problem.benchmark)
            bench += (bench.empty() ? "" : ", ") + k + "=" + std::to_string(v);
        r << "| benchmark size | " << bench << " |\n"
          << "| device | " << (p.device.empty() ? "none" : p.device) << " |\n"
          << "| problem fingerprint | " << (p.problem_fingerprint.empty() ? "none" : p.problem_fingerprint) << " |\n\n"
          << "## Files\n\n"
          << "- `" << options.unit << ".h`: `" << options.name_space << "::launch(...)` and `" << options.name_space
          << "::workspace_bytes(...)`, plain C++ with the CUDA runtime.\n"
          << "- `" << options.unit << ".cu`: the kernel (tunables fixed) and the launch function: every launch of "
          << "the plan in order, grid, block and shared memory computed from the sizes.\n\n"
          << "## Build and call\n\n```sh\nnvcc -std=c++17 -arch=sm_90 -O3 -c " << options.unit << ".cu -o "
          << options.unit << ".o\n```\n\n```cpp\n#include \"" << options.unit << ".h\"\n\n"
          << "const char* why = nullptr;\ncudaError_t e = " << options.name_space << "::launch("
          << [&] {
            std::vector<std::string> a;
            for (const auto& b : problem.buffers)
                a.push_back(b.name);
            for (const auto& s : sizes())
                a.push_back(s);
            for (const auto& s : problem.scalars)
                a.push_back(s.name);
            return join(a);
        }() << (problem.scalars.empty() ? "" : "")
            << ", stream, nullptr, &why);\n```\n\n"
            << "The kernel was verified at the problem's correctness sizes and timed at its benchmark size; at other "
               "sizes,\ncheck it with `kerncast-cli sweep` before relying on it. Sizes the launch plan rejects (a grid "
               "of 0 blocks,\na size over 2^31-1 passed as int) return cudaErrorInvalidValue and launch nothing.\n";
        return r.str();
    }
};

}  // namespace

void check_configuration(const KernelProgram& program, const Bindings& tunables) {
    for (const auto& [name, value] : tunables)
        if (!program.tunable(name))
            throw Error(SourceLocation{program.file, 0}, "the program declares no tunable " + name);
    std::vector<std::string> missing;
    for (const auto& t : program.tunables)
        if (!tunables.count(t.name))
            missing.push_back(t.name);
    if (!missing.empty())
        throw Error(SourceLocation{program.file, 0},
                    "tunables without a value: " + join(missing) + " (give each with --tunable NAME=VALUE)");
    if (!program.isValid(tunables))
        throw Error(SourceLocation{program.file, 0}, "the tunables " + describe_tunables(tunables) +
                                                         " are not a valid configuration of the program (a value is "
                                                         "not among the allowed ones, or a where condition fails)");
}

std::string cpp_identifier(const std::string& name) {
    std::string out;
    for (char c : name)
        out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
        out = "k_" + out;
    return out;
}

std::vector<ExportedFile> export_cuda(const Problem& problem, const KernelProgram& program, const Bindings& tunables,
                                      KernelExportOptions options) {
    program.validate(problem);
    check_configuration(program, tunables);
    if (program.usesTensorMaps() || program.usesClusters() || program.usesConditions())
        throw Error(SourceLocation{program.file, program.launches.front().line},
                    "this program launches with tensor maps, thread-block clusters or when(...) conditions, which the "
                    "exported host code does not build yet; export a program without tensormap(...) arguments, "
                    "cluster(...) and when(...)");
    if (options.unit.empty())
        options.unit = cpp_identifier(problem.name);
    if (options.name_space.empty())
        options.name_space = "kerncast_" + cpp_identifier(problem.name);
    if (cpp_identifier(options.name_space) != options.name_space)
        throw Error("the namespace '" + options.name_space + "' is not a C++ identifier");
    if (options.provenance.source.empty())
        options.provenance.source = program.file;
    const Unit unit{problem, program, tunables, options};
    return {{options.unit + ".h", unit.header()}, {options.unit + ".cu", unit.source()}, {"README.md", unit.readme()}};
}

}  // namespace kerncast
