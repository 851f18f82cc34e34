#!/usr/bin/env python3
"""Times each problem's equivalent PyTorch eager call on the local GPU.

Reads resources/problems/*/problem.json, builds the benchmark-case tensors the way the problem describes them
(dtype, shape, init distribution), evaluates the problem's "pytorch" expression with CUDA events around it, flushing
the L2 before every timed call as Kerncast's worker does, and prints one JSON line per problem plus a table on stderr. TF32 is off for cuBLAS and cuDNN (PyTorch leaves it on
for cuDNN convolutions by default), so that fp32 problems are compared with fp32 library kernels.

    python3 bench/pytorch_eager.py [--problems DIR] [--only NAME ...] [--runs 50]
"""
import argparse
import json
import math
import pathlib
import statistics
import sys

import torch

from kerncast_sizes import eval_size_expr

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
          "i32": torch.int32, "u8": torch.uint8}


def make_tensor(spec, sizes, gen):
    shape = [eval_size_expr(s, sizes) for s in spec["shape"]]
    dtype = DTYPES[spec["dtype"]]
    init = spec.get("init") or {}
    dist = init.get("dist", "uniform")
    if spec["role"] == "out":
        return torch.empty(shape, dtype=dtype, device="cuda")
    if dist == "randint":
        lo = eval_size_expr(init.get("lo", 0), sizes)
        hi = eval_size_expr(init.get("hi", 2), sizes)
        return torch.randint(lo, hi, shape, generator=gen, device="cuda").to(dtype)
    if dist == "normal":
        t = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32)
        return (t * float(init.get("std", 1.0)) + float(init.get("mean", 0.0))).to(dtype)
    lo, hi = float(init.get("lo", -1.0)), float(init.get("hi", 1.0))
    t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32)
    return (t * (hi - lo) + lo).to(dtype)


def time_problem(problem, runs):
    sizes = problem["sizes"]["benchmark"]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    env = {"torch": torch, "float": float, "int": int}
    for spec in problem["buffers"]:
        env[spec["name"]] = make_tensor(spec, sizes, gen)
    for scalar in problem.get("scalars", []):
        env[scalar["name"]] = scalar["value"]
    env.update(sizes)
    expr = problem["pytorch"]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    for _ in range(3):
        eval(expr, env)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        eval(expr, env)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times), len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", default=str(pathlib.Path(__file__).resolve().parent.parent / "resources" / "problems"))
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_eager: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    failures = 0
    rows = []
    for path in sorted(pathlib.Path(args.problems).glob("*/problem.json")):
        problem = json.loads(path.read_text())
        name = problem["name"]
        if args.only and name not in args.only:
            continue
        if "pytorch" not in problem:
            continue
        try:
            median_us, n = time_problem(problem, args.runs)
            print(json.dumps({"problem": name, "pytorch_eager_us": median_us, "n": n,
                              "expression": problem["pytorch"], "device": torch.cuda.get_device_name(0)}), flush=True)
            rows.append((name, f"{median_us:10.1f}", str(n)))
        except Exception as exc:  # report and go on: one bad expression must not hide the others
            failures += 1
            print(f"pytorch_eager: {name}: {exc}", file=sys.stderr)
            rows.append((name, "failed", "0"))
        torch.cuda.empty_cache()
    print(f"{'problem':16} {'eager us':>10} {'n':>4}", file=sys.stderr)
    for name, us, n in rows:
        print(f"{name:16} {us:>10} {n:>4}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
