#!/usr/bin/env python3
"""Writes a Kernel Tuner cache file with Kernel Tuner's own cache writer (kernel_tuner.util.process_cache,
store_cache and close_cache), filled with the measurements of a Kerncast recording, so that tests read a file
written exactly as Kernel Tuner writes one.

    write_fixture.py KERNEL_TUNER_SRC PYTHON_CONSTRAINT_SRC RECORDING PROBLEM_DIR OUT.json [--limit N] [--open]

The fixtures here were made with Kernel Tuner 1.4.0 (commit 96a6abc) from resources/recordings/nvidia-h200/saxpy.jsonl:
saxpy_h200_cache.json (every configuration) and saxpy_h200_open_cache.json (--limit 5 --open).

KERNEL_TUNER_SRC is a checkout of github.com/KernelTuner/kernel_tuner; PYTHON_CONSTRAINT_SRC one of
github.com/python-constraint/python-constraint (Kernel Tuner imports it; Debian does not package it). Needs Debian's
python3-numpy. The tuned kernel's name, sizes and tunables are the problem family's; times are in ms, as Kernel Tuner
keeps them.
"""
import argparse
import json
import os
import re
import sys
import types
from collections import OrderedDict


def family_tunables(problem_dir):
    params = OrderedDict()
    kernel = None
    with open(os.path.join(problem_dir, "family.cu")) as f:
        for line in f:
            m = re.match(r"\s*//\s*@kerncast\s+tunable\s+(\w+)\s+([-\d\s]+)", line)
            if m:
                params[m.group(1)] = [int(v) for v in m.group(2).split()]
            m = re.match(r"\s*//\s*@kerncast\s+launch\s+(\w+)", line)
            if m and kernel is None:
                kernel = m.group(1)
    return kernel, params


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel_tuner")
    ap.add_argument("constraint")
    ap.add_argument("recording")
    ap.add_argument("problem_dir")
    ap.add_argument("out")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--open", action="store_true", help="leave the file as an interrupted session leaves it")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
    from kernel_tuner_source import import_kernel_tuner

    import_kernel_tuner(a.kernel_tuner, a.constraint)
    from kernel_tuner import util

    kernel, params = family_tunables(a.problem_dir)
    with open(os.path.join(a.problem_dir, "problem.json")) as f:
        sizes = list(json.load(f, object_pairs_hook=OrderedDict)["sizes"]["benchmark"].values())
    lines = [json.loads(l) for l in open(a.recording) if l.strip()]
    header = lines[0]
    if os.path.exists(a.out):
        os.remove(a.out)
    kernel_options = types.SimpleNamespace(kernel_name=kernel, problem_size=sizes)
    tuning_options = types.SimpleNamespace(tune_params=params, simulation_mode=False, objective="time")
    runner = types.SimpleNamespace(get_device_info=lambda: types.SimpleNamespace(name=header["device"]["name"]),
                                   simulation_mode=False)
    cache = util.process_cache(a.out, kernel_options, tuning_options, runner)
    written = 0
    for entry in lines[1:]:
        if not entry.get("label", "").startswith("family ") or entry["measurement"]["status"] == "not_recorded":
            continue
        t = entry["tunables"]
        values = [t[k] for k in params]
        m = entry["measurement"]
        result = dict(zip(params.keys(), values))
        if m["status"] == "ok":
            samples = [s / 1000.0 for s in m["candidate"]["samples_us"]]
            result["time"] = m["candidate"]["median_us"] / 1000.0
            result["times"] = samples
        elif m["status"] == "compile_error":
            result["__error__"] = util.CompilationFailedConfig()
        else:
            result["__error__"] = util.RuntimeFailedConfig()
        result["compile_time"] = m.get("compile_ms", 0)
        result["verification_time"] = m.get("verify_ms", 0)
        result["benchmark_time"] = m.get("time_ms", 0)
        result["strategy_time"] = 0
        result["framework_time"] = 0
        result["timestamp"] = "2026-06-18 09:42:13.000000+00:00"
        util.store_cache(",".join(str(v) for v in values), result, a.out, cache)
        written += 1
        if a.limit and written >= a.limit:
            break
    if not a.open:
        util.close_cache(a.out)
    print(f"wrote {written} configurations to {a.out}")


if __name__ == "__main__":
    main()
