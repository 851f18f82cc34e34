#include "core/kernel_export.h"

#include "core/expr_cpp.h"
#include "core/source_scan.h"
#include "core/text_util.h"

#include <algorithm>
#include <array>
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
    static const std::regex extern_c(R"(extern\s*"C"\s*(\{)?)");
    // Only what the compiler reads as code counts: an #include or #define inside a block comment or a raw string
    // stays where it is, and `extern "C"` inside a comment or a string is left alone.
    const std::vector<SourceChar> kind = classify_source(source);
    std::set<std::string> seen;
    size_t offset = 0;  // of the line in the source
    std::istringstream in(source);
    for (std::string line; std::getline(in, line); offset += line.size() + 1) {
        const size_t first = line.find_first_not_of(" \t");
        const bool directive = first != std::string::npos && kind[offset + first] == SourceChar::Code;
        std::smatch m;
        if (directive && std::regex_match(line, include_line)) {
            out.includes.push_back(trim(line));
            out.body += "\n";
            continue;
        }
        if (directive && std::regex_search(line, m, define_line) && seen.insert(m[1]).second)
            out.macros.push_back(m[1]);
        std::string kept;
        size_t from = 0;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), extern_c); it != std::sregex_iterator(); ++it) {
            const size_t at = static_cast<size_t>(it->position());
            if (kind[offset + at] != SourceChar::Code)
                continue;
            kept += line.substr(from, at - from) + ((*it)[1].matched ? "namespace {" : "");
            from = at + static_cast<size_t>(it->length());
        }
        out.body += kept + line.substr(from) + "\n";
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

// Building tensor maps in an exported unit: cuTensorMapEncodeTiled taken from the driver the CUDA runtime loaded, so
// that the unit links no libcuda (guarded, as kLaunchSupport).
const char* kTensorMapSupport = R"(#ifndef KERNCAST_TENSOR_MAP_SUPPORT
#define KERNCAST_TENSOR_MAP_SUPPORT
#include <cuda.h>
#include <cudaTypedefs.h>
namespace kerncast_launch {

// A dense array of `rank` dimensions (innermost first) at `address`; elements outside it read as zero.
inline bool tensor_map(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, const void* address,
                       const cuuint64_t* dims, const cuuint32_t* box, cuuint64_t element_bytes, int swizzle) {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            fn = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }();
    if (!encode)
        return false;
    cuuint64_t strides[4] = {};
    cuuint64_t stride = element_bytes;
    for (cuuint32_t d = 0; d + 1 < rank; ++d)
        strides[d] = stride *= dims[d];
    const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
    const CUtensorMapSwizzle s = swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                 : CU_TENSOR_MAP_SWIZZLE_NONE;
    return encode(map, type, rank, const_cast<void*>(address), dims, strides, box, element_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, s, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace kerncast_launch
#endif  // KERNCAST_TENSOR_MAP_SUPPORT
)";

const char* tensor_map_type(DType t) {
    switch (t) {
    case DType::F32:
        return "CU_TENSOR_MAP_DATA_TYPE_FLOAT32";
    case DType::F16:
        return "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
    case DType::BF16:
        return "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16";
    case DType::F64:
        return "CU_TENSOR_MAP_DATA_TYPE_FLOAT64";
    case DType::I32:
        return "CU_TENSOR_MAP_DATA_TYPE_INT32";
    case DType::U8:
        return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    }
    return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
}

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

    // nvcc's option for what the unit is compiled for: the program's first target, else Hopper. An arch-specific
    // target gets -gencode alone (nvcc's -arch=sm_90a also builds compute_90 PTX, where wgmma does not assemble).
    std::string buildArch() const {
        if (program.targets.empty())
            return "-arch=sm_90";
        const std::string& t = program.targets.front();
        return "-gencode arch=compute_" + t.substr(3) + ",code=" + t;
    }

    std::string bufferBytes(const BufferSpec& b) const {
        std::string text;
        for (const auto& d : b.shape)
            text += (text.empty() ? "(" : " * (") + d.text() + ")";
        text = "(" + (text.empty() ? std::string("1") : text) + ") * " + std::to_string(dtype_size(b.dtype));
        return cpp(Expr::parse(text));
    }

    // What a tensor map covers: a problem buffer (its name is the address), or a scratch buffer (its offset in the
    // workspace); its element type and, as C++ over the sizes, its capacity in bytes.
    struct MapTarget {
        std::string address;
        DType dtype = DType::F32;
        std::string capacity;
    };
    MapTarget mapTarget(const TensorMapSpec& t) const {
        if (const BufferSpec* b = problem.buffer(t.buffer))
            return {t.buffer, b->dtype, bufferBytes(*b)};
        const auto it = std::find_if(program.scratch.begin(), program.scratch.end(),
                                     [&](const ScratchSpec& sc) { return sc.name == t.buffer; });
        return {"kc_scratch + kc_workspace.offset[" + std::to_string(it - program.scratch.begin()) + "]", it->dtype,
                cpp(Expr::parse("(" + it->count.text() + ") * " + std::to_string(dtype_size(it->dtype))))};
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
        // Every launch's configuration first, so that sizes the plan rejects launch nothing. A launch with when(...)
        // is configured (and checked) only where its condition holds.
        for (size_t i = 0; i < program.launches.size(); ++i) {
            const LaunchSpec& l = program.launches[i];
            const std::string n = std::to_string(i);
            c << "\n    // " << program.file << ":" << l.line << ": launch " << l.kernel << "\n";
            std::vector<std::array<std::string, 3>> values;  // name, C++ expression, plan text
            for (int d = 0; d < 3; ++d)
                values.push_back({"grid" + n + kAxis[d], cpp(l.grid[d]), l.grid[d].text()});
            for (int d = 0; d < 3; ++d)
                values.push_back({"block" + n + kAxis[d], cpp(l.block[d]), l.block[d].text()});
            values.push_back({"smem" + n, cpp(l.smem), l.smem.text()});
            if (l.hasCluster())
                for (int d = 0; d < 3; ++d)
                    values.push_back({"cluster" + n + kAxis[d], cpp(l.cluster[d]), l.cluster[d].text()});
            for (const auto& [index, t] : l.tensormaps)
                for (size_t d = 0; d < t.shape.size(); ++d) {
                    values.push_back({"map" + n + "_" + std::to_string(index) + "_shape" + std::to_string(d),
                                      cpp(t.shape[d]), t.shape[d].text()});
                    values.push_back({"map" + n + "_" + std::to_string(index) + "_box" + std::to_string(d),
                                      cpp(t.box[d]), t.box[d].text()});
                }
            std::string indent = "    ";
            if (l.when.empty()) {
                for (const auto& [name, expr, text] : values)
                    c << "    const int64_t " << name << " = " << expr << ";  // " << text << "\n";
            } else {
                c << "    const bool run" << n << " = (" << cpp(l.when) << ") != 0;  // when(" << l.when.text()
                  << ")\n    if (kc_status.error)\n        return kerncast_launch::fail(message, kc_status.error);\n";
                for (const auto& value : values)
                    c << "    int64_t " << value[0] << " = " << (value[0].rfind("smem", 0) == 0 ? "0" : "1") << ";\n";
                c << "    if (run" << n << ") {\n";
                indent = "        ";
                for (const auto& [name, expr, text] : values)
                    c << indent << name << " = " << expr << ";  // " << text << "\n";
            }
            const std::string ret = indent + "    return kerncast_launch::fail(message, ";
            c << indent << "if (kc_status.error)\n" << ret << "kc_status.error);\n";
            for (int d = 0; d < 3; ++d) {
                c << indent << "if (!kerncast_launch::within(grid" << n << kAxis[d] << ", 1, " << kGridMax[d] << "))\n"
                  << ret
                  << quoted(l.kernel + ": grid." + kAxis[d] + " = " + l.grid[d].text() + " is outside 1.." +
                            std::to_string(kGridMax[d]) + " at these sizes")
                  << ");\n";
                c << indent << "if (!kerncast_launch::within(block" << n << kAxis[d] << ", 1, " << kBlockMax[d]
                  << "))\n"
                  << ret
                  << quoted(l.kernel + ": block." + kAxis[d] + " = " + l.block[d].text() + " is outside 1.." +
                            std::to_string(kBlockMax[d]))
                  << ");\n";
            }
            c << indent << "if (block" << n << "x * block" << n << "y * block" << n << "z > 1024)\n"
              << ret << quoted(l.kernel + ": more than 1024 threads per block") << ");\n"
              << indent << "if (!kerncast_launch::within(smem" << n << ", 0, 4294967295LL))\n"
              << ret << quoted(l.kernel + ": smem = " + l.smem.text() + " is not a byte count at these sizes")
              << ");\n";
            if (l.hasCluster()) {
                for (int d = 0; d < 3; ++d)
                    c << indent << "if (!kerncast_launch::within(cluster" << n << kAxis[d] << ", 1, "
                      << kMaxClusterBlocks << ") || grid" << n << kAxis[d] << " % cluster" << n << kAxis[d]
                      << " != 0)\n"
                      << ret
                      << quoted(l.kernel + ": cluster." + kAxis[d] + " = " + l.cluster[d].text() + " is outside 1.." +
                                std::to_string(kMaxClusterBlocks) + " or does not divide the grid at these sizes")
                      << ");\n";
                c << indent << "if (cluster" << n << "x * cluster" << n << "y * cluster" << n << "z > "
                  << kMaxClusterBlocks << ")\n"
                  << ret
                  << quoted(l.kernel + ": a cluster of more than " + std::to_string(kMaxClusterBlocks) + " blocks")
                  << ");\n";
            }
            for (const auto& [index, t] : l.tensormaps) {
                // The map must stay inside its buffer: the copy engine would read and write past it.
                std::string elements;
                for (size_t d = 0; d < t.shape.size(); ++d)
                    elements += (d ? " * " : "") + ("(" + t.shape[d].text() + ")");
                const MapTarget target = mapTarget(t);
                c << indent << "if ("
                  << cpp(Expr::parse("(" + elements + ") * " + std::to_string(dtype_size(target.dtype)))) << " > "
                  << target.capacity << " || kc_status.error)\n"
                  << ret
                  << quoted(l.kernel + ": the tensor map of " + t.buffer + " (shape " + elements +
                            ") does not lie inside it at these sizes")
                  << ");\n";
            }
            if (!l.when.empty())
                c << "    }\n";
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
            for (size_t a_index = 0; a_index < l.args.size(); ++a_index) {
                const std::string& a = l.args[a_index];
                if (l.tensormaps.count(a_index)) {
                    args.push_back("");  // built where it is launched
                } else if (problem.buffer(a)) {
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
            const std::string run = l.when.empty() ? "" : " && run" + n;
            c << "    if (kc_error == cudaSuccess" << run << " && smem" << n << " > 48 * 1024)\n"
              << "        kc_error = cudaFuncSetAttribute(" << l.kernel
              << ", cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem" << n << "));\n";
            const std::string grid = "dim3(static_cast<unsigned>(grid" + n + "x), static_cast<unsigned>(grid" + n +
                                     "y), static_cast<unsigned>(grid" + n + "z))";
            const std::string block = "dim3(static_cast<unsigned>(block" + n + "x), static_cast<unsigned>(block" + n +
                                      "y), static_cast<unsigned>(block" + n + "z))";
            if (l.tensormaps.empty() && !l.hasCluster()) {
                c << "    if (kc_error == cudaSuccess" << run << ") {\n"
                  << "        " << l.kernel << "<<<" << grid << ", " << block << ", static_cast<size_t>(smem" << n
                  << "), stream>>>(" << join(args) << ");\n"
                  << "        kc_error = cudaGetLastError();\n    }\n";
                continue;
            }
            // Tensor maps are passed by value as the kernel's own 128-byte type, clusters need the launch
            // attribute: both go through cudaLaunchKernelExC with the argument values in variables of their own.
            c << "    if (kc_error == cudaSuccess" << run << ") {\n";
            std::vector<std::string> slots;
            for (size_t a = 0; a < l.args.size(); ++a) {
                const std::string v = "kc_arg" + std::to_string(a);
                slots.push_back("&" + v);
                if (const auto tm = l.tensormaps.find(a); tm != l.tensormaps.end()) {
                    const TensorMapSpec& t = tm->second;
                    const std::string m = "map" + n + "_" + std::to_string(a);
                    std::string dims, boxes;
                    for (size_t d = 0; d < t.shape.size(); ++d) {
                        dims += (d ? ", " : "") + std::string("static_cast<cuuint64_t>(") + m + "_shape" +
                                std::to_string(d) + ")";
                        boxes += (d ? ", " : "") + std::string("static_cast<cuuint32_t>(") + m + "_box" +
                                 std::to_string(d) + ")";
                    }
                    const MapTarget target = mapTarget(t);
                    c << "        CUtensorMap " << v << ";\n"
                      << "        const cuuint64_t " << v << "_dims[] = {" << dims << "};\n"
                      << "        const cuuint32_t " << v << "_box[] = {" << boxes << "};\n"
                      << "        if (!kerncast_launch::tensor_map(&" << v << ", " << tensor_map_type(target.dtype)
                      << ", " << t.shape.size() << ", " << target.address << ", " << v << "_dims, " << v << "_box, "
                      << dtype_size(target.dtype) << ", " << t.swizzle << "))\n"
                      << "            return kerncast_launch::fail(message, "
                      << quoted(l.kernel + ": the driver refused the tensor map of " + t.buffer +
                                " (a box over 256, a row not a multiple of 16 bytes, a box wider than its swizzle, "
                                "or a driver without tensor maps)")
                      << ");\n";
                } else {
                    c << "        auto " << v << " = " << args[a] << ";\n";
                }
            }
            c << "        void* kc_args[] = {" << join(slots) << "};\n"
              << "        cudaLaunchConfig_t kc_config = {};\n"
              << "        kc_config.gridDim = " << grid << ";\n"
              << "        kc_config.blockDim = " << block << ";\n"
              << "        kc_config.dynamicSmemBytes = static_cast<size_t>(smem" << n << ");\n"
              << "        kc_config.stream = stream;\n";
            if (l.hasCluster())
                c << "        cudaLaunchAttribute kc_cluster;\n"
                  << "        kc_cluster.id = cudaLaunchAttributeClusterDimension;\n"
                  << "        kc_cluster.val.clusterDim.x = static_cast<unsigned>(cluster" << n << "x);\n"
                  << "        kc_cluster.val.clusterDim.y = static_cast<unsigned>(cluster" << n << "y);\n"
                  << "        kc_cluster.val.clusterDim.z = static_cast<unsigned>(cluster" << n << "z);\n"
                  << "        kc_config.attrs = &kc_cluster;\n        kc_config.numAttrs = 1;\n"
                  << "        if (cluster" << n << "x * cluster" << n << "y * cluster" << n << "z > 8)\n"
                  << "            kc_error = cudaFuncSetAttribute(" << l.kernel
                  << ", cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n";
            c << "        if (kc_error == cudaSuccess)\n"
              << "            kc_error = cudaLaunchKernelExC(&kc_config, reinterpret_cast<const void*>(&" << l.kernel
              << "), kc_args);\n    }\n";
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
          << ".\n// Build: nvcc -std=c++17 " << buildArch() << " -c " << options.unit << ".cu (see README.md).\n";
        for (const auto& inc : k.includes)
            c << inc << "\n";
        c << "#include \"" << options.unit << ".h\"\n\n" << expr_cpp_support() << "\n" << kLaunchSupport << "\n";
        if (program.usesTensorMaps())
            c << kTensorMapSupport << "\n";
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
          << "## Build and call\n\n```sh\nnvcc -std=c++17 " << buildArch() << " -O3 -c " << options.unit << ".cu -o "
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
