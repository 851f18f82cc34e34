// export --format torch: the CUDA unit of export_cuda and a PyTorch extension around it (docs/formats.md "Exporting a
// kernel").
#include "core/expr_cpp.h"
#include "core/kernel_export.h"
#include "core/text_util.h"

#include <algorithm>
#include <sstream>

namespace kerncast {

namespace {

const char* torch_dtype(DType t) {
    switch (t) {
    case DType::F32:
        return "Float";
    case DType::F16:
        return "Half";
    case DType::BF16:
        return "BFloat16";
    case DType::F64:
        return "Double";
    case DType::I32:
        return "Int";
    case DType::U8:
        return "Byte";
    }
    return "Float";
}

bool is_input(const BufferSpec& b) { return b.role != Role::Out; }
bool is_output(const BufferSpec& b) { return b.role != Role::In; }

// A size is read from the first input tensor with a dimension that is exactly that size; the others (a group count
// that no shape names) are keyword arguments of forward().
struct SizeSource {
    std::string size;
    std::string buffer;  // empty: a keyword argument
    size_t dim = 0;
};

std::vector<SizeSource> size_sources(const Problem& problem) {
    std::vector<SizeSource> out;
    for (const auto& s : problem.sizeNames()) {
        SizeSource src{s, {}, 0};
        for (const auto& b : problem.buffers) {
            if (!is_input(b) || !src.buffer.empty())
                continue;
            for (size_t d = 0; d < b.shape.size(); ++d)
                if (trim(b.shape[d].text()) == s) {
                    src.buffer = b.name;
                    src.dim = d;
                    break;
                }
        }
        out.push_back(src);
    }
    return out;
}

// Shapes whose every dimension is the constant 1 are the results of reductions, which PyTorch returns as 0-dim
// tensors.
bool is_scalar_shape(const BufferSpec& b) {
    for (const auto& d : b.shape)
        if (d.names().size() != 0 || d.eval({}) != 1)
            return false;
    return true;
}

std::string op_source(const Problem& problem, const KernelExportOptions& o) {
    std::ostringstream c;
    const auto sizes = problem.sizeNames();
    c << "// The PyTorch op of the exported " << problem.name << " kernel: forward(inputs, sizes, scalars) checks the "
      << "input tensors,\n// allocates the outputs and runs " << o.name_space
      << "::launch on the current stream. Built by " << o.unit << ".py.\n"
      << "// PyTorch builds extensions with half-precision operators and conversions switched off; the kernel was "
         "compiled\n// and verified with them, as NVRTC and nvcc have them by default.\n"
      << "#undef __CUDA_NO_HALF_OPERATORS__\n#undef __CUDA_NO_HALF_CONVERSIONS__\n#undef __CUDA_NO_HALF2_OPERATORS__\n"
      << "#undef __CUDA_NO_BFLOAT16_CONVERSIONS__\n#undef __CUDA_NO_BFLOAT16_OPERATORS__\n\n"
      << "#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>\n#include <torch/extension.h>\n\n"
      << "#include <string>\n#include <vector>\n\n#include \"" << o.unit << ".cu\"\n\nnamespace {\n\n"
      << "// A buffer's shape at these sizes, as problem.json gives it.\n"
      << "std::vector<int64_t> shape_of(const std::string& buffer, "
      << [&] {
        std::string p;
        for (const auto& s : sizes)
            p += (p.empty() ? "" : ", ") + std::string("int64_t ") + s;
        return p;
    }() << ") {\n"
        << "    kerncast_expr::Status kc_status;\n    std::vector<int64_t> shape;\n";
    for (const auto& b : problem.buffers) {
        std::vector<std::string> dims;
        for (const auto& d : b.shape)
            dims.push_back(expr_to_cpp(d, "kc_status"));
        c << "    if (buffer == \"" << b.name << "\")\n        shape = {" << join(dims) << "};\n";
    }
    for (const auto& s : sizes)
        c << "    (void)" << s << ";\n";
    c << "    TORCH_CHECK(!kc_status.error, buffer, \": its shape cannot be computed at these sizes: \", "
         "kc_status.error);\n    return shape;\n}\n\n}  // namespace\n\n";

    c << "std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs, const std::vector<int64_t>& "
         "sizes,\n                                   const std::vector<double>& scalars) {\n";
    size_t n_inputs = 0;
    for (const auto& b : problem.buffers)
        n_inputs += is_input(b);
    c << "    TORCH_CHECK(inputs.size() == " << n_inputs << ", \"expected " << n_inputs
      << " input tensors\");\n    TORCH_CHECK(sizes.size() == " << sizes.size() << ", \"expected " << sizes.size()
      << " sizes (" << join(sizes) << ")\");\n    TORCH_CHECK(scalars.size() == " << problem.scalars.size()
      << ", \"expected " << problem.scalars.size() << " scalars\");\n";
    for (size_t i = 0; i < sizes.size(); ++i)
        c << "    const int64_t " << sizes[i] << " = sizes[" << i << "];\n";
    std::vector<std::string> size_args = sizes;
    size_t in = 0;
    std::string first_input;
    for (const auto& b : problem.buffers) {
        if (!is_input(b))
            continue;
        if (first_input.empty())
            first_input = b.name;
        c << "    const torch::Tensor& " << b.name << " = inputs[" << in++ << "];\n"
          << "    TORCH_CHECK(" << b.name << ".is_cuda() && " << b.name << ".is_contiguous() && " << b.name
          << ".scalar_type() == torch::k" << torch_dtype(b.dtype) << ", \"" << b.name << ": expected a contiguous "
          << to_string(b.dtype) << " CUDA tensor\");\n"
          << "    TORCH_CHECK(" << b.name << ".sizes().vec() == shape_of(\"" << b.name << "\", " << join(size_args)
          << "), \"" << b.name << ": expected the shape problem.json gives at these sizes, got \", " << b.name
          << ".sizes());\n";
    }
    if (first_input.empty())
        c << "    const auto options = torch::TensorOptions().device(torch::kCUDA, "
             "c10::cuda::current_device());\n";
    else
        c << "    const c10::cuda::CUDAGuard guard(" << first_input << ".device());\n"
          << "    const auto options = " << first_input << ".options();\n";
    for (const auto& b : problem.buffers)
        if (b.role == Role::Out)
            c << "    torch::Tensor " << b.name << " = torch::empty(shape_of(\"" << b.name << "\", " << join(size_args)
              << "), options.dtype(torch::k" << torch_dtype(b.dtype) << "));\n";
    c << "    const char* why = nullptr;\n"
      << "    const size_t workspace_bytes = " << o.name_space << "::workspace_bytes(" << join(size_args)
      << (sizes.empty() ? "" : ", ") << "&why);\n"
      << "    torch::Tensor workspace;\n    if (workspace_bytes > 0)\n"
      << "        workspace = torch::empty({static_cast<int64_t>(workspace_bytes)}, options.dtype(torch::kByte));\n";
    std::vector<std::string> args;
    for (const auto& b : problem.buffers)
        args.push_back(std::string("static_cast<") + (b.role == Role::In ? "const " : "") + cpp_type(b.dtype) + "*>(" +
                       b.name + ".data_ptr())");
    for (const auto& s : sizes)
        args.push_back(s);
    for (size_t i = 0; i < problem.scalars.size(); ++i)
        args.push_back(std::string("static_cast<") +
                       (problem.scalars[i].dtype == DType::F32   ? "float"
                        : problem.scalars[i].dtype == DType::F64 ? "double"
                                                                 : "int") +
                       ">(scalars[" + std::to_string(i) + "])");
    args.push_back("at::cuda::getCurrentCUDAStream()");
    args.push_back("workspace_bytes > 0 ? workspace.data_ptr() : nullptr");
    args.push_back("&why");
    c << "    const cudaError_t error = " << o.name_space << "::launch(" << join(args) << ");\n"
      << "    TORCH_CHECK(error == cudaSuccess, \"" << problem.name
      << ": the launch failed: \", why ? why : cudaGetErrorString(error));\n";
    std::vector<std::string> outs;
    for (const auto& b : problem.buffers)
        if (is_output(b))
            outs.push_back(b.name);
    c << "    return {" << join(outs) << "};\n}\n\n"
      << "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n    m.def(\"forward\", &forward, \"The exported " << problem.name
      << " kernel: inputs, sizes, scalars -> outputs\");\n}\n";
    return c.str();
}

std::string py_string(const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\')
            out += '\\';
        if (ch == '\n') {
            out += "\\n";
            continue;
        }
        out += ch;
    }
    return out + "\"";
}

std::string wrapper_source(const Problem& problem, const KernelExportOptions& o) {
    std::ostringstream p;
    const auto sources = size_sources(problem);
    std::vector<std::string> inputs, keywords;
    for (const auto& b : problem.buffers)
        if (is_input(b))
            inputs.push_back(b.name);
    for (const auto& s : sources)
        if (s.buffer.empty())
            keywords.push_back(s.size + "=None");
    for (const auto& s : problem.scalars) {
        std::ostringstream v;
        v << s.value;
        keywords.push_back(s.name + "=" + v.str());
    }
    p << "\"\"\"" << problem.name << ": " << problem.description << "\n\n"
      << "The kernel Kerncast found (" << o.provenance.source << ") as a PyTorch op. forward(" << join(inputs)
      << (keywords.empty() ? "" : ", *, " + join(keywords)) << ") takes and returns tensors as\n"
      << "    " << problem.pytorch << "\n"
      << "does (inputs: contiguous CUDA tensors of the dtypes and shapes problem.json gives; the outputs are new "
         "tensors,\nan inout buffer is updated in place and returned). The extension is built on first use with\n"
         "torch.utils.cpp_extension.load (nvcc; about a minute, then cached).\n\"\"\"\n"
      << "import pathlib\n\nimport torch\nfrom torch.utils.cpp_extension import load\n\n"
      << "_HERE = pathlib.Path(__file__).resolve().parent\n_EXTENSION = None\n\n"
      << "INPUTS = ["
      << [&] {
        std::string s;
        for (const auto& i : inputs)
            s += (s.empty() ? "" : ", ") + py_string(i);
        return s;
    }() << "]\n"
        << "SIZES = ["
        << [&] {
        std::string s;
        for (const auto& x : sources)
            s += (s.empty() ? "" : ", ") + py_string(x.size);
        return s;
        }() << "]\n"
        << "KEYWORD_SIZES = ["
        << [&] {
        std::string s;
        for (const auto& x : sources)
            if (x.buffer.empty())
                s += (s.empty() ? "" : ", ") + py_string(x.size);
        return s;
        }() << "]\n\n\n"
        << "def extension(verbose=False):\n    \"\"\"The compiled op (built once per process, cached on disk by "
           "PyTorch).\"\"\"\n    global _EXTENSION\n    if _EXTENSION is None:\n"
        << "        _EXTENSION = load(name=\"" << o.name_space << "_op\", sources=[str(_HERE / \"" << o.unit
        << "_op.cu\")],\n                          extra_include_paths=[str(_HERE)], extra_cuda_cflags=[\"-O3\", "
           "\"-std=c++17\"],\n                          verbose=verbose)\n    return _EXTENSION\n\n\n"
        << "def forward(" << join(inputs) << (keywords.empty() ? "" : ", *, " + join(keywords)) << "):\n";
    for (const auto& s : sources)
        if (s.buffer.empty())
            p << "    if " << s.size << " is None:\n        raise TypeError(\"forward() needs the size " << s.size
              << "= (no input's shape gives it)\")\n";
    std::vector<std::string> size_values, scalar_values;
    for (const auto& s : sources)
        size_values.push_back(s.buffer.empty() ? "int(" + s.size + ")"
                                               : "int(" + s.buffer + ".shape[" + std::to_string(s.dim) + "])");
    for (const auto& s : problem.scalars)
        scalar_values.push_back("float(" + s.name + ")");
    p << "    outputs = extension().forward([" << join(inputs) << "], [" << join(size_values) << "], ["
      << join(scalar_values) << "])\n";
    size_t i = 0;
    for (const auto& b : problem.buffers)
        if (is_output(b)) {
            if (is_scalar_shape(b))
                p << "    outputs[" << i << "] = outputs[" << i << "].reshape(())\n";
            ++i;
        }
    p << "    return outputs[0] if len(outputs) == 1 else tuple(outputs)\n";
    return p.str();
}

// The test script is the same for every problem: it reads problem.json beside it.
const char* kTestScript = R"PY(#!/usr/bin/env python3
"""Checks the exported op against the problem's `pytorch` expression and times both.

At every correctness size and the benchmark size of problem.json (or the sizes given with --sizes), the inputs are
drawn as problem.json describes them, the op's outputs are compared with the expression's within the problem's
tolerance (|a - b| <= atol' + rtol * |b|, atol' = atol * rms(b) when scale_atol_by_rms), and both are timed with CUDA
events, the L2 cache flushed before every timed call as Kerncast does. Prints a table (one JSON line per case with
--json); exit code 1 when a case does not match.

    python3 test_UNIT.py [--sizes '[{"N": 4096}, {"N": 65536}]'] [--runs 50] [--json]
"""
import argparse
import json
import pathlib
import statistics
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import UNIT as op  # noqa: E402

PROBLEM = json.loads((HERE / "problem.json").read_text())
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
          "i32": torch.int32, "u8": torch.uint8}


def size_expr(text, sizes):
    env = dict(sizes)
    env.update({"min": min, "max": max, "ceil_div": lambda a, b: -(-a // b), "__builtins__": {}})
    return int(eval(str(text).replace("//", "/").replace("/", "//"), env))


def make_buffers(sizes, case_init, gen):
    env = {}
    for spec in PROBLEM["buffers"]:
        shape = [size_expr(s, sizes) for s in spec["shape"]]
        dtype = DTYPES[spec["dtype"]]
        init = case_init.get(spec["name"]) or spec.get("init") or {}
        dist = init.get("dist", "uniform")
        if spec["role"] == "out":
            env[spec["name"]] = torch.empty(shape, dtype=dtype, device="cuda")
        elif dist == "randint":
            lo, hi = size_expr(init.get("lo", 0), sizes), size_expr(init.get("hi", 2), sizes)
            env[spec["name"]] = torch.randint(lo, hi, shape, generator=gen, device="cuda").to(dtype)
        elif dist == "normal":
            t = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32)
            env[spec["name"]] = (t * float(init.get("std", 1.0)) + float(init.get("mean", 0.0))).to(dtype)
        else:
            lo, hi = float(init.get("lo", -1.0)), float(init.get("hi", 1.0))
            t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32)
            env[spec["name"]] = (t * (hi - lo) + lo).to(dtype)
    return env


def expression(env, sizes):
    scope = {"torch": torch, "float": float, "int": int}
    scope.update(env)
    scope.update({s["name"]: s["value"] for s in PROBLEM.get("scalars", [])})
    scope.update(sizes)
    return eval(PROBLEM["pytorch"], scope)


def exported(env, sizes):
    kwargs = {name: sizes[name] for name in op.KEYWORD_SIZES}
    kwargs.update({s["name"]: s["value"] for s in PROBLEM.get("scalars", [])})
    return op.forward(*[env[name] for name in op.INPUTS], **kwargs)


def fresh(env):
    """Inputs as they were drawn: an inout buffer is updated in place by both sides."""
    return {name: t.clone() for name, t in env.items()}


def compare(got, ref):
    tol = PROBLEM.get("tolerance", {})
    rtol, atol = float(tol.get("rtol", 1e-5)), float(tol.get("atol", 1e-6))
    got = [got] if torch.is_tensor(got) else list(got)
    ref = [ref] if torch.is_tensor(ref) else list(ref)
    worst = 0.0
    ok = len(got) == len(ref)
    for a, b in zip(got, ref):
        a, b = a.double().flatten(), b.double().flatten()
        if a.numel() != b.numel():
            return False, float("inf")
        scaled = atol * float(b.pow(2).mean().sqrt()) if tol.get("scale_atol_by_rms", True) and b.numel() else atol
        err = (a - b).abs()
        worst = max(worst, float(err.max()) if err.numel() else 0.0)
        ok = ok and bool(torch.all(err <= scaled + rtol * b.abs())) and not bool(torch.isnan(a).any())
    return ok, worst


def time_us(fn, runs):
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, dtype=torch.float32, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    # A spin on the GPU after the flush keeps the stream busy while Python reaches the launch, so that the events
    # time the op's kernels, not the host's way to them (Kerncast times the kernels alone).
    spin = getattr(torch.cuda, "_sleep", None)
    times = []
    for _ in range(runs):
        flush.zero_()
        if spin:
            spin(1_000_000)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", help="JSON list of size cases (default: problem.json's correctness and benchmark)")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="one JSON line per case")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.sizes:
        cases = [("sweep", c) for c in json.loads(args.sizes)]
    else:
        cases = [("correctness", c) for c in PROBLEM["sizes"]["correctness"]]
        cases.append(("benchmark", PROBLEM["sizes"]["benchmark"]))
    op.extension()
    failures = 0
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    rows = []
    for kind, case in cases:
        # A correctness case may draw some inputs its own way ("init": large logits, ties...).
        sizes = {name: value for name, value in case.items() if name != "init"}
        drawn = make_buffers(sizes, case.get("init") or {}, gen)
        ref = expression(fresh(drawn), sizes)
        got = exported(fresh(drawn), sizes)
        torch.cuda.synchronize()
        ok, worst = compare(got, ref)
        failures += not ok
        timed_op, timed_ref = fresh(drawn), fresh(drawn)
        op_us = time_us(lambda: exported(timed_op, sizes), args.runs)
        ref_us = time_us(lambda: expression(timed_ref, sizes), args.runs)
        row = {"problem": PROBLEM["name"], "case": kind, "sizes": sizes, "match": ok, "max_abs_error": worst,
               "exported_us": op_us, "pytorch_us": ref_us, "device": torch.cuda.get_device_name(0)}
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        del drawn, timed_op, timed_ref
        torch.cuda.empty_cache()
    if not args.json:
        print(f"{'case':12} {'sizes':32} {'match':6} {'max err':>10} {'exported us':>12} {'pytorch us':>11}")
        for r in rows:
            sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
            print(f"{r['case']:12} {sizes:32} {'yes' if r['match'] else 'NO':6} {r['max_abs_error']:10.3g} "
                  f"{r['exported_us']:12.1f} {r['pytorch_us']:11.1f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

}  // namespace

std::vector<ExportedFile> export_torch(const Problem& problem, const KernelProgram& program, const Bindings& tunables,
                                       KernelExportOptions options) {
    if (problem.pytorch.empty())
        throw Error(problem.file + ": the problem has no \"pytorch\" expression, so the torch format has nothing to "
                                   "take its inputs and outputs from; export --format cuda instead");
    if (problem.json_text.empty())
        throw Error(problem.file + ": the problem's text is not known (load it from its folder)");
    if (options.unit.empty())
        options.unit = cpp_identifier(problem.name);
    if (options.name_space.empty())
        options.name_space = "kerncast_" + cpp_identifier(problem.name);
    std::vector<ExportedFile> files = export_cuda(problem, program, tunables, options);
    files.push_back({options.unit + "_op.cu", op_source(problem, options)});
    files.push_back({options.unit + ".py", wrapper_source(problem, options)});
    files.push_back({"test_" + options.unit + ".py", replace_all(kTestScript, "UNIT", options.unit)});
    files.push_back({"problem.json", problem.json_text});
    for (auto& f : files)
        if (f.path == "README.md")
            f.text += "\n## PyTorch\n\n```python\nimport " + options.unit + "\n\nout = " + options.unit +
                      ".forward(...)  # as " + problem.pytorch + "\n```\n\n`python3 test_" + options.unit +
                      ".py` builds the extension, checks it against the expression at the problem's correctness "
                      "and\nbenchmark sizes (problem.json) and times both; `--sizes '[{...}, ...]'` checks other "
                      "sizes.\n";
    return files;
}

}  // namespace kerncast
