#!/usr/bin/env python3
"""Runs Kernel Tuner's own cache reader and simulation runner on a cache Kerncast exported.

    check_export.py KERNEL_TUNER_SRC PYTHON_CONSTRAINT_SRC CACHE.json PROBLEM_DIR

tune_kernel() is given what a Kernel Tuner user of this problem would give it, read from the problem folder (the
family's kernel function, the benchmark sizes, the tunables in declared order with their values), so Kernel Tuner's
checks of kernel name, problem size and tunable order are exercised against our file; then random_sample runs 20
evaluations in simulation mode. Prints {"read": entries read, "visited": unique configurations, "best": {...}}.
"""
import json
import os
import sys
import warnings
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
sys.path.insert(0, HERE)
from kernel_tuner_source import import_kernel_tuner  # noqa: E402
from write_fixture import family_tunables  # noqa: E402


def main():
    kt_src, constraint_src, cache_path, problem_dir = sys.argv[1:5]
    warnings.filterwarnings("ignore")
    kt, _, _ = import_kernel_tuner(kt_src, constraint_src)
    from kernel_tuner import util

    kernel, params = family_tunables(problem_dir)
    with open(os.path.join(problem_dir, "problem.json")) as f:
        sizes = list(json.load(f, object_pairs_hook=OrderedDict)["sizes"]["benchmark"].values())
    cache = util.read_cache(cache_path, open_cache=False)
    stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        results, _ = kt.tune_kernel(kernel, "", sizes, [], params, cache=cache_path, simulation_mode=True,
                                    restrictions=[util.infer_restrictions_from_cache(cache)],
                                    strategy="random_sample", strategy_options={"max_fevals": 20}, quiet=True)
    finally:
        sys.stdout.close()
        sys.stdout = stdout
    seen = {}
    for r in results:
        if r and "__error__" not in r:
            seen[tuple(r[k] for k in params)] = r
    best = min(seen.values(), key=lambda r: r["time"])
    print(json.dumps({"read": len(cache["cache"]), "visited": len(seen),
                      "best": {k: best[k] for k in list(params) + ["time"]}}))


if __name__ == "__main__":
    main()
