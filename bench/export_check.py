#!/usr/bin/env python3
"""Search, export --format torch, build, check, sweep: the path of README "Using a kernel you found", on a GPU.

Driven by bench/export_check (which sets up the CLI of the GPU bundle). For each problem: a short search on cuda:0
with the local surrogate, its best candidate exported as a PyTorch extension and the extension built in the background
(while the next searches and the sweeps measure); then kerncast-cli sweep --around benchmark of each (stored in the
run), then each test script at the problem's correctness and benchmark sizes and again at the sweep's sizes. Prints the tables; exit code
1 when an exported op does not match the pytorch expression at some size or a step failed.

    python3 bench/export_check.py --cli build/app/kerncast-cli --out export-check
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

PROBLEMS = ["softmax", "sgemm", "prefix_sum", "cross_entropy"]


def run(cmd, log, timeout, env=None):
    """Runs a command, its output appended to log; returns (exit code, stdout)."""
    t0 = time.time()
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            f.write(f"timed out after {timeout} s\n")
            return 124, ""
        f.write(p.stdout)
        f.write(f"exit {p.returncode} after {time.time() - t0:.0f} s\n")
    return p.returncode, p.stdout


def json_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--search-seconds", type=float, default=40)
    parser.add_argument("--runs", type=int, default=30, help="timed runs per case in the test scripts")
    parser.add_argument("--problems", nargs="*", default=PROBLEMS)
    args = parser.parse_args()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "export_check.log"
    env = dict(os.environ)
    env["TORCH_EXTENSIONS_DIR"] = str(out / "torch-extensions")
    env.setdefault("MAX_JOBS", str(max(2, (os.cpu_count() or 4) // 4)))
    t_start = time.time()
    failures = []
    exported = {}
    builds = {}
    for p in args.problems:
        run_file = out / f"{p}.sqlite"
        if run_file.exists():
            run_file.unlink()
        code, _ = run([args.cli, "search", "--problem", p, "--device", "cuda:0", "--surrogate", "local", "--budget",
                       str(args.budget), "--time-budget", str(args.search_seconds), "--seed", "1", "--run",
                       str(run_file), "--json"], log, args.search_seconds + 240)
        if code != 0:
            failures.append(f"{p}: search exit {code}")
            continue
        folder = out / p
        code, text = run([args.cli, "--json", "export", "--run", str(run_file), "--candidate", "best", "--format",
                          "torch", "--out", str(folder)], log, 60)
        if code != 0:
            failures.append(f"{p}: export exit {code}")
            continue
        exported[p] = json.loads(text)
        # The extension builds on the CPU while the next search measures on the GPU.
        builds[p] = subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(folder)!r}); "
                                      f"import {p}; {p}.extension(verbose=True)"], env=env,
                                     stdout=open(out / f"{p}-build.log", "w"), stderr=subprocess.STDOUT)
    # The sweeps measure on the GPU while the last extensions still build on the CPU.
    sweeps, checks, op_sweeps = {}, {}, {}
    for p, summary in exported.items():
        code, text = run([args.cli, "--json", "sweep", "--run", str(out / f"{p}.sqlite"), "--candidate",
                          str(summary["candidate"]), "--around", "benchmark", "--device", "cuda:0"], log, 600)
        try:
            sweeps[p] = json.loads(text)
        except json.JSONDecodeError:
            sweeps[p] = {"results": []}
        if code != 0:
            failures.append(f"{p}: sweep exit {code}")
    for p, summary in exported.items():
        if builds[p].wait() != 0:
            failures.append(f"{p}: the extension did not build (see {p}-build.log)")
            continue
        folder = out / p
        code, text = run([sys.executable, str(folder / f"test_{p}.py"), "--json", "--runs", str(args.runs)], log, 300,
                         env)
        checks[p] = json_lines(text)
        if code != 0:
            failures.append(f"{p}: test_{p}.py exit {code}")
        sizes = [r["sizes"] for r in sweeps.get(p, {}).get("results", [])]
        if sizes:
            code, text = run([sys.executable, str(folder / f"test_{p}.py"), "--json", "--runs", "10", "--sizes",
                              json.dumps(sizes)], log, 300, env)
            op_sweeps[p] = json_lines(text)
            if code != 0:
                failures.append(f"{p}: test_{p}.py at the sweep's sizes exit {code}")

    print(f"\nexported ops against the pytorch expression (device: "
          f"{next((r['device'] for c in checks.values() for r in c), '?')})")
    print(f"{'problem':14} {'candidate':42} {'case':12} {'sizes':28} {'match':6} {'op us':>9} {'kerncast us':>11} "
          f"{'op/kerncast':>11} {'pytorch us':>10}")
    for p, rows in checks.items():
        summary = exported[p]
        label = f"#{summary['candidate']} " + " ".join(f"{k}={v}" for k, v in summary.get("tunables", {}).items())
        for r in rows:
            sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
            kc = summary.get("candidate_us") if r["case"] == "benchmark" else None
            ratio = f"{r['exported_us'] / kc:.3f}" if kc else "-"
            within = "" if not kc else (" ok" if abs(r["exported_us"] / kc - 1) <= 0.05 else " >5%")
            print(f"{p:14} {label[:42]:42} {r['case']:12} {sizes[:28]:28} {'yes' if r['match'] else 'NO':6} "
                  f"{r['exported_us']:9.1f} {(f'{kc:.1f}' if kc else '-'):>11} {ratio + within:>11} "
                  f"{r['pytorch_us']:10.1f}")
    print("\nsweeps (kerncast-cli sweep --around benchmark, stored in each run; the op checked at the same sizes)")
    print(f"{'problem':14} {'sizes':30} {'status':10} {'candidate us':>12} {'reference us':>12} {'speedup':>8} "
          f"{'op match':>8} {'op us':>9} {'pytorch us':>10}")
    for p, s in sweeps.items():
        ops = {json.dumps(r["sizes"], sort_keys=True): r for r in op_sweeps.get(p, [])}
        for r in s.get("results", []):
            sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
            o = ops.get(json.dumps(r["sizes"], sort_keys=True))
            print(f"{p:14} {sizes[:30]:30} {r['status']:10} {r.get('candidate_us', float('nan')):12.1f} "
                  f"{r.get('reference_us', float('nan')):12.1f} {r.get('speedup', float('nan')):8.3f} "
                  f"{('yes' if o and o['match'] else 'NO') if o else '-':>8} "
                  f"{(o['exported_us'] if o else float('nan')):9.1f} {(o['pytorch_us'] if o else float('nan')):10.1f}")
    print(f"\nwall time {time.time() - t_start:.0f} s; logs in {out}")
    for f in failures:
        print("FAILED: " + f)
    mismatches = [p for p, rows in list(checks.items()) + list(op_sweeps.items()) for r in rows if not r["match"]]
    return 1 if failures or mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
