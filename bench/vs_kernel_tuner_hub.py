#!/ usr / bin / env python3
"""Kerncast's gated search against Kernel Tuner's search strategies on the autotuning field's own spaces: the
AutoTuningAssociation benchmark_hub's T1 problems and their brute-forced Kernel Tuner caches.

    /usr/bin/python3 bench/vs_kernel_tuner_hub.py KERNEL_TUNER_SRC --constraint PYTHON_CONSTRAINT_SRC --hub HUB
        [--kerncast-cli build/app/kerncast-cli] [--budgets 20,50,100,200] [--seeds 10] [--kerncast-seeds N]
        [--strategies a,b] [--spaces convolution_milo/A100,...] [--variants default,transfer] [--jobs 2]
        [--cache build/vs-kernel-tuner-hub-cache] [--skip-kerncast | --only-kerncast] [--stop-after S]
        [--keep-runs DIR]
        [--report-only] [--plan] [--json FILE]
    (the same as bench/vs_kernel_tuner --hub HUB ...)

Spaces: every T1 file of the hub (kernels/*.json, currently_unused/kernels/*.json) whose kernel is CUDA, on every
NVIDIA GPU with a cache <GPU>.json.gz in cachefiles/<T1 file name>/ or, for the kernels the hub keeps in
currently_unused/, in currently_unused/cachefiles/<name>/ and currently_unused/cachefiles/KernelTuner data/<name>/
(AMD's MI* and W* are left out; a cache whose tunables are not the T1 file's, a T1 file without caches in the
checkout, and one that Kerncast's import refuses, are named in the output with why).

Kernel Tuner: every strategy it ships that runs here, in its simulation mode on the cache, over the T1 file's own
space (its tunables and conditions: a configuration that failed when the cache was made is a failed evaluation, as it
was when the hub's caches were brute-forced), max_fevals = budget, a separate run per budget and seed.

Kerncast: the T1 file becomes a problem folder (`kerncast-cli import --t1`), each cache a replay recording
(`kerncast-cli import --kernel-tuner`), and the selective search with the local surrogate runs on the replay device
from a resources folder laid out for that space alone. Its local surrogate learns, before its first measurement, the
recordings of the replay device's folder other than the replayed problem's (engine/search/search_factory.cpp,
make_search_runner -> examples_from_recordings_except). Variant `default` (kerncast_gated): that folder holds the
replayed recording and the other hub kernels' recordings on the same GPU, and no recording of the replayed kernel on
any GPU. Variant `transfer` (kerncast_gated_transfer): it also holds the same kernel's caches from the other GPUs
(never the replayed GPU's), each under a problem of its own name so that the search learns them. The layout is
checked before every search, and every forecast's reasoning after it (how many programs of the replayed problem
the model had learned, sibling problems stacked in, how many programs it learned in all): a search that learned what
its variant must not makes the run fail. One search per seed at the largest budget, scored at each budget by its
first measurements (the search does not plan by its budget). Its measurement of the reference is the T1 default
configuration when that is in the space.

Scores per space and over all spaces: the best configuration found as a fraction of the optimum (median over seeds,
then over spaces), evaluations to 90% and 95% of the optimum (budget + 1 when not reached), and the methodology score
of autotuning_methodology (see methodology_score below), Kerncast's forecast quality after its 30th measurement
(Kendall tau-b; Brier and CRPS skill against the climatology of the scored forecasts' own true bins, gf-v2 bins of
the true speedup over the forecast's anchor from the cache), and its wall time per measurement beside the cache's
median compile + benchmark time per configuration. Results are kept in --cache, one file per space and method, one
entry per (budget, seed): an interrupted run resumes; Kernel Tuner's are keyed by its sources and the cache's SHA-256,
Kerncast's by the kerncast-cli binary, the problem folder and the recordings it could learn from.
"""
import argparse
import gzip
import hashlib
import importlib.machinery
import importlib.util
import json
import math
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _load_vs_kernel_tuner():
    """The shared driver (bench/vs_kernel_tuner has no .py suffix): its Kernel Tuner runner, result cache, strategy
    probe and rank correlation."""
    if "vs_kernel_tuner" in sys.modules:
        return sys.modules["vs_kernel_tuner"]
    loader = importlib.machinery.SourceFileLoader("vs_kernel_tuner", os.path.join(HERE, "vs_kernel_tuner"))
    spec = importlib.util.spec_from_loader("vs_kernel_tuner", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["vs_kernel_tuner"] = module
    loader.exec_module(module)
    return module


vkt = _load_vs_kernel_tuner()
median = vkt.median

KERNCAST = "kerncast_gated"
TRANSFER = "kerncast_gated_transfer"
VARIANT_METHOD = {"default": KERNCAST, "transfer": TRANSFER}
TARGETS = (0.90, 0.95)
FORECAST_AFTER = 30  # forecast quality is scored on forecasts made after this many measurements
GF_V2_EDGES = (0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0)  # core/bins.cpp BinScheme::gfV2
AMD_PREFIXES = ("MI", "W")  # compared with the upper-case file name
REASONING = re.compile(r"from (\d+) pairs of (\d+) programs, (\d+) of pack '([^']*)'")
SIBLINGS = re.compile(r"with (\d+) sibling problems")


# ----------------------------------------------------------------------------------------------------------------
# The hub's spaces


class Space:
    """One kernel on one GPU: the T1 file, its CUDA kernel file and the brute-forced cache."""

    def __init__(self, kernel, gpu, t1, kernel_file, cache_gz):
        self.kernel, self.gpu, self.t1, self.kernel_file, self.cache_gz = kernel, gpu, t1, kernel_file, cache_gz
        self.id = f"{kernel}/{gpu}"
        self.slug = None  # the replay device's folder name, from the cache's device_name
        self.cache_json = None  # the decompressed cache Kernel Tuner reads
        self.keys = self.restrictions = self.default = None
        self.reference = None  # the configuration of the imported problem's reference (else the T1 default)
        self.truth = {}  # "v1,v2,..." -> time in ms, None for a configuration that failed
        self.optimum = self.compile_benchmark_ms = None
        self.sha256 = None
        self.text = None  # the decompressed cache, between load and keep

    def load(self):
        with open(self.t1) as f:
            t1 = json.load(f)
        space = t1["ConfigurationSpace"]
        with gzip.open(self.cache_gz, "rt") as f:
            text = f.read()
        self.sha256 = hashlib.sha256(text.encode()).hexdigest()
        cache = json.loads(text)
        self.keys = cache["tune_params_keys"]
        names = [p["Name"] for p in space["TuningParameters"]]
        if sorted(names) != sorted(self.keys):
            return f"its tunables ({', '.join(self.keys)}) are not the T1 file's ({', '.join(names)})"
        self.restrictions = [c["Expression"] for c in space.get("Conditions", [])]
        defaults = {p["Name"]: p.get("Default") for p in space["TuningParameters"]}
        self.default = ",".join(str(defaults[k]) for k in self.keys)
        self.reference = self.default
        self.slug = re.sub(r"[^a-z0-9]+", "-", cache.get("device_name", self.gpu).lower()).strip("-")
        costs = []
        for key, e in cache["cache"].items():
            t = e.get("time")
            self.truth[key] = float(t) if isinstance(t, (int, float)) and "__error__" not in e else None
            parts = [e.get("compile_time"), e.get("benchmark_time")]
            if all(isinstance(x, (int, float)) for x in parts):
                costs.append(sum(parts))
        valid = sorted(t for t in self.truth.values() if t is not None)
        if not valid:
            return "no configuration of the cache has a time"
        self.optimum = valid[0]
        self.sorted_times = valid
        self.compile_benchmark_ms = median(costs) if costs else None
        self.text = text
        return None

    def keep(self, workdir):
        """Writes the decompressed cache that Kernel Tuner reads (only for a space that is searched)."""
        self.cache_json = os.path.join(workdir, "kernel-tuner", self.kernel, self.gpu + ".json")
        os.makedirs(os.path.dirname(self.cache_json), exist_ok=True)
        with open(self.cache_json, "w") as f:
            f.write(self.text)
        self.text = None


# Where the hub keeps brute-forced caches, one folder per kernel: cachefiles/<kernel>/, and for the kernels it no longer
# lists, currently_unused/cachefiles/<kernel>/ and the older Kernel Tuner caches of currently_unused/cachefiles/
# KernelTuner data/<kernel>/ (more GPUs: RTX 2080 Ti, 3060 laptop, 3090, Titan). A GPU (the cache's device_name) found
# in more than one is taken from the first.
CACHE_ROOTS = ("cachefiles", os.path.join("currently_unused", "cachefiles"),
               os.path.join("currently_unused", "cachefiles", "KernelTuner data"))


def nvidia_caches(folder):
    """The Kernel Tuner caches of NVIDIA GPUs in a folder (not their T4 conversions, not AMD's MI* and W*)."""
    return sorted(n for n in os.listdir(folder) if n.endswith(".json.gz") and not n.endswith("_T4.json.gz")
                  and not n.upper().startswith(AMD_PREFIXES))


def discover(hub):
    """(spaces, notes): every CUDA T1 file with NVIDIA caches; notes say what was left out and why."""
    spaces, notes = [], []
    t1_files = []
    for folder in ("kernels", os.path.join("currently_unused", "kernels")):
        d = os.path.join(hub, folder)
        if os.path.isdir(d):
            t1_files += sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".json"))
    if not t1_files:
        sys.exit(f"error: {hub} holds no T1 files (kernels/*.json): is it a checkout of the benchmark_hub?")
    for t1 in t1_files:
        kernel = os.path.splitext(os.path.basename(t1))[0]
        rel = os.path.relpath(t1, hub)
        try:
            with open(t1) as f:
                spec = json.load(f)["KernelSpecification"]
        except (OSError, ValueError, KeyError) as e:
            notes.append(f"{rel}: not a T1 file ({e})")
            continue
        if spec.get("Language") != "CUDA":
            notes.append(f"{rel}: its kernel is {spec.get('Language')}, not CUDA")
            continue
        kernel_file = spec.get("KernelFile", "")
        candidates = [os.path.join(os.path.dirname(t1), kernel_file), os.path.join(os.path.dirname(t1), "..",
                                                                                   kernel_file)]
        # A T1 file may name its HIP port (".cu.hip"); the CUDA file beside it is the kernel.
        if kernel_file.endswith(".hip"):
            candidates = [c[: -len(".hip")] for c in candidates] + candidates
        found = next((os.path.normpath(c) for c in candidates if os.path.isfile(c) and not c.endswith(".hip")),
                     None)
        if not found:
            notes.append(f"{rel}: no CUDA kernel file for {kernel_file}")
            continue
        folders = [os.path.join(hub, root, kernel) for root in CACHE_ROOTS]
        found_any = False
        for cache_dir in (d for d in folders if os.path.isdir(d)):
            rel_dir = os.path.relpath(cache_dir, hub)
            for name in nvidia_caches(cache_dir):
                found_any = True
                path = os.path.join(cache_dir, name)
                with open(path, "rb") as f:
                    magic = f.read(2)
                if magic != b"\x1f\x8b":
                    notes.append(f"{rel_dir}/{name}: not gzip data (a Git LFS pointer? run `git lfs pull` or "
                                 f"`git checkout` the .gz files)")
                    continue
                spaces.append(Space(kernel, name[: -len(".json.gz")], t1, found, path))
        if not found_any:
            notes.append(f"{rel}: no NVIDIA cache in this checkout (looked in "
                         f"{', '.join(os.path.relpath(d, hub) + '/' for d in folders)})")
    # Cache folders that no T1 file names: said, so that a reader knows what the checkout holds beyond the spaces.
    named = {os.path.splitext(os.path.basename(t1))[0] for t1 in t1_files}
    for root in CACHE_ROOTS:
        d = os.path.join(hub, root)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            folder = os.path.join(d, name)
            if name in named or name == "KernelTuner data" or not os.path.isdir(folder):
                continue
            nvidia = nvidia_caches(folder)
            if nvidia and name.startswith("KTT"):
                notes.append(f"{os.path.relpath(folder, hub)}/: left out: the Kernel Tuning Toolkit's outputs (another "
                             f"tuner's format), not Kernel Tuner caches")
            elif nvidia:
                notes.append(f"{os.path.relpath(folder, hub)}/: {len(nvidia)} NVIDIA caches, left out: no T1 file "
                             f"(kernels/{name}.json or currently_unused/kernels/{name}.json) describes their kernel")
    return spaces, notes


# ----------------------------------------------------------------------------------------------------------------
# Scores


def best_so_far(values):
    out, best = [], None
    for v in values:
        if v is not None and (best is None or v < best):
            best = v
        out.append(best)
    return out


def evaluations_to(values, optimum, target, budget):
    """The evaluation (1-based) after which the best time is within `target` of the optimum; budget + 1 if never."""
    for i, b in enumerate(best_so_far(values[:budget]), start=1):
        if b is not None and optimum / b >= target:
            return i
    return budget + 1


def methodology_curve(runs, dist, budget):
    """The standardised performance curve of one method on one space over function evaluations 1..budget, as
    autotuning_methodology computes it (github.com/AutoTuningAssociation/autotuning_methodology, src/
    autotuning_methodology):
      - curves.py StochasticOptimizationAlgorithm.get_curve_over_fevals with a distribution: each run's best-so-far
        objective value, its index in the ascending distribution of the space's valid values (get_indices_in_
        distribution, searchsorted left), the median index over the runs (NaN ignored, rounded), the value there;
        a run shorter than the range keeps its last value (the "fictional" part);
      - baseline.py RandomSearchCalculatedBaseline._get_random_curve: random search without replacement, the value
        at index round(M (N + 1) / (M + 1)) (at most N - 1) of the descending distribution after M evaluations (its
        PCHIP smoothing is the identity on a range of consecutive integers);
      - baseline.py Baseline.get_standardised_curves: (curve - random) / (optimum - random).
    One choice is ours: at an evaluation where no run has found a valid configuration yet, the methodology's curve
    has no value (its fevals range starts later); we take the space's worst valid value there."""
    import numpy as np

    dist = np.asarray(dist, dtype=float)
    n = dist.shape[0]
    rows = []
    for values in runs:
        b = best_so_far(values[:budget])
        b += [b[-1] if b else None] * (budget - len(b))
        rows.append([np.nan if x is None else x for x in b])
    values = np.array(rows, dtype=float).T  # fevals x runs
    indices = np.searchsorted(dist, values, side="left").astype(float)
    indices[np.isnan(values)] = np.nan
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanmedian(indices, axis=1)
    curve = np.where(np.isnan(med), dist[-1], dist[np.clip(np.round(np.nan_to_num(med)), 0, n - 1).astype(int)])
    descending = dist[::-1]
    random_curve = np.array([descending[min(n - 1, round(m * (n + 1) / (m + 1)))] for m in range(1, budget + 1)])
    optimum = dist[0]
    with np.errstate(all="ignore"):
        standardised = np.where(optimum != random_curve, (curve - random_curve) / (optimum - random_curve), 1.0)
    return standardised


def methodology_score(runs, dist, budget):
    """The methodology's score of one method on one space: the mean of the standardised curve over the range
    (report_experiments.py get_strategy_scores: np.mean of the aggregated curve; 1 = the optimum at once, 0 =
    random search, negative = worse than random). Over several spaces it averages the curves
    (get_strategies_aggregated_performance: np.mean over the spaces), which is the mean of the spaces' scores."""
    return float(statistics.fmean(methodology_curve(runs, dist, budget)))


def check_methodology(source):
    """Compares methodology_curve with autotuning_methodology's own code (a source checkout, run from there) on
    random runs over a random space, some runs with failures at the start; returns the largest difference."""
    import random
    import types
    import warnings

    import numpy as np

    sys.path.insert(0, os.path.join(source, "src"))
    from autotuning_methodology.baseline import Baseline, RandomSearchCalculatedBaseline
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm

    warnings.filterwarnings("ignore")
    worst = 0.0
    for trial in range(20):
        rng = random.Random(trial)
        dist = sorted(rng.uniform(1, 10) for _ in range(rng.randint(1000, 3000)))  # spaces larger than 5x budget
        budget = rng.randint(5, 200)
        runs = [[None] + [rng.choice(dist) if rng.random() > 0.2 else None for _ in range(budget - 1)]
                for _ in range(rng.randint(3, 20))]
        runs[0][0] = rng.choice(dist)  # the methodology needs a value at the first evaluation
        best = np.array([[np.nan if b is None else b for b in best_so_far(v)] for v in runs], dtype=float).T
        algo = StochasticOptimizationAlgorithm.__new__(StochasticOptimizationAlgorithm)
        algo._x_fevals = np.tile(np.arange(1, budget + 1, dtype=float)[:, None], (1, len(runs)))
        algo._y, algo.display_name, algo.minimization = best, "check", True
        fevals = np.arange(1, budget + 1)
        parts = algo.get_curve_over_fevals(fevals, dist=np.array(dist), confidence_level=None)
        curve = np.concatenate([parts[2], parts[6]]) if parts[5].ndim > 0 else parts[2]
        baseline = RandomSearchCalculatedBaseline.__new__(RandomSearchCalculatedBaseline)
        baseline._redwhite_index_dist = np.array(dist)[::-1]
        baseline.searchspace_stats = types.SimpleNamespace(total_performance_absolute_optimum=lambda: dist[0])
        random_curve = baseline._get_random_curve(fevals)
        baseline.get_curve = lambda _range, _x_type: random_curve
        theirs = Baseline.get_standardised_curves(baseline, fevals, [curve], "fevals")[0]
        worst = max(worst, float(np.max(np.abs(theirs - methodology_curve(runs, dist, budget)))))
    return worst


def bin_of(speedup):
    """core/bins.cpp BinScheme::binOf for gf-v2: bin b holds e(b-1) < S <= e(b); 0 for no speedup."""
    if not (speedup > 0 and math.isfinite(speedup)):
        return 0
    for b, edge in enumerate(GF_V2_EDGES, start=1):
        if speedup <= edge:
            return b
    return len(GF_V2_EDGES) + 1


def brier(p, truth):  # core/metrics.cpp brier_score
    return sum((q - (1.0 if b == truth else 0.0)) ** 2 for b, q in enumerate(p, start=1))


def crps(p, truth):  # core/metrics.cpp ranked_probability_score
    cdf, total = 0.0, 0.0
    for b in range(1, len(p)):
        cdf += p[b - 1]
        total += (cdf - (1.0 if b >= truth else 0.0)) ** 2
    return total / (len(p) - 1)


def forecast_quality(rows):
    """rows: (probabilities, true bin, forecast log speedup, true log speedup). Kendall tau-b of the forecast and
    true log speedups; Brier and CRPS skill against the set's own true-bin climatology (core/metrics.cpp
    add_climatology)."""
    rows = [r for r in rows if r[1] > 0]
    if len(rows) < 3:
        return None
    truths = [r[1] for r in rows]
    climatology = [truths.count(b) / len(truths) for b in range(1, 9)]
    b = statistics.fmean(brier(r[0], r[1]) for r in rows)
    c = statistics.fmean(crps(r[0], r[1]) for r in rows)
    b0 = statistics.fmean(brier(climatology, t) for t in truths)
    c0 = statistics.fmean(crps(climatology, t) for t in truths)
    return {"n": len(rows), "tau_b": vkt.kendall_tau_b([r[2] for r in rows], [r[3] for r in rows]),
            "brier_skill": 1 - b / b0 if b0 > 0 else float("nan"),
            "crps_skill": 1 - c / c0 if c0 > 0 else float("nan")}


# ----------------------------------------------------------------------------------------------------------------
# Kerncast's side: problem folders, recordings, the resources folder of each search


class KerncastSide:
    def __init__(self, cli, workdir, cli_id):
        self.cli, self.workdir = cli, workdir
        self.problems = {}  # (kernel, name or None) -> (problem folder, problem name)
        self.recordings = {}  # (space id, problem name) -> recording path
        # Imports are kept between runs of the benchmark, for the kerncast-cli that made them.
        stamp = os.path.join(workdir, "IMPORTED_BY")
        try:
            with open(stamp) as f:
                fresh = f.read() != cli_id
        except OSError:
            fresh = True
        if fresh:
            shutil.rmtree(workdir, ignore_errors=True)
            os.makedirs(workdir)
            with open(stamp, "w") as f:
                f.write(cli_id)
        help_text = subprocess.run([cli, "--help"], capture_output=True, text=True).stdout
        self.resources_option = "--resources" in help_text

    def available(self):
        p = subprocess.run([self.cli, "import", "--help"], capture_output=True, text=True)
        missing = [o for o in ("--t1", "--kernel-tuner") if o not in p.stdout]
        return None if p.returncode == 0 and not missing else (
            f"{self.cli} import has no {' or '.join(missing) or 'help'} (Kerncast's side needs import --t1 and "
            f"import --kernel-tuner of a hub cache)")

    def _run(self, cmd, what):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise CliError(what, cmd, p.returncode, (p.stderr.strip() or p.stdout.strip())[-600:])
        return p

    def problem(self, space, name=None):
        """The problem folder of the space's T1 file (imported once per kernel and name) and its name: the T1
        file's own, or `name` (the same problem under another name, which the search learns as another problem)."""
        key = (space.kernel, name)
        if key not in self.problems:
            out = os.path.join(self.workdir, "problems", name or space.kernel)
            if not os.path.isfile(os.path.join(out, "problem.json")):
                tmp = out + ".importing"
                shutil.rmtree(tmp, ignore_errors=True)
                cmd = [self.cli, "import", "--t1", space.t1, "--out", tmp, "--kernel-file", space.kernel_file]
                self._run(cmd + (["--name", name] if name else []), f"import of {space.t1}")
                os.replace(tmp, out)
            with open(os.path.join(out, "problem.json")) as f:
                self.problems[key] = (out, json.load(f)["name"])
        return self.problems[key]

    def recording(self, space, name=None):
        """The space's cache as a replay recording of the problem (or of its copy `name`)."""
        folder, problem_name = self.problem(space, name)
        key = (space.id, problem_name)
        if key not in self.recordings:
            out = os.path.join(self.workdir, "recordings", space.slug, problem_name + ".jsonl")
            if not os.path.isfile(out):
                os.makedirs(os.path.dirname(out), exist_ok=True)
                self._run([self.cli, "import", "--kernel-tuner", space.cache_json, "--problem", folder, "--out",
                           out + ".importing"], f"import of {space.cache_gz}")
                os.replace(out + ".importing", out)
            self.recordings[key] = out
        return self.recordings[key]

    def members(self, space, spaces, variant):
        """(space, problem name or None) of every recording in the resources folder of `space`'s searches: the
        replayed one, the other kernels on the same GPU, and for `transfer` the same kernel on the other GPUs under
        a name of their own."""
        out = [(space, None)] + [(s, None) for s in spaces if s.gpu == space.gpu and s.kernel != space.kernel]
        if variant == "transfer":
            out += [(s, f"{s.kernel}__from_{s.slug}") for s in spaces
                    if s.kernel == space.kernel and s.gpu != space.gpu and s.slug != space.slug]
        return out

    def prepare(self, spaces, variants, jobs):
        """Imports every problem and recording the layouts need, the recordings `jobs` at a time."""
        import concurrent.futures

        needed = {(s.id, name): (s, name) for space in spaces for v in variants
                  for s, name in self.members(space, spaces, v)}
        for s, name in needed.values():
            self.problem(s, name)
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
            for f in [pool.submit(self.recording, s, name) for s, name in needed.values()]:
                f.result()

    def layout(self, space, spaces, variant):
        """The resources folder of one space's searches: problems/ and recordings/<slug>/ holding the replayed
        recording and what the variant may learn from. Returns (folder, identity, learning: {problem: lines})."""
        folder = os.path.join(self.workdir, "resources", variant, space.kernel, space.gpu)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(os.path.join(folder, "problems"))
        rec_dir = os.path.join(folder, "recordings", space.slug)
        os.makedirs(rec_dir)
        learning, identity = {}, {}
        for s, name in self.members(space, spaces, variant):
            problem_folder, problem_name = self.problem(s, name)
            dst = os.path.join(folder, "problems", problem_name)
            if not os.path.exists(dst):
                os.symlink(os.path.relpath(problem_folder, os.path.dirname(dst)), dst)
            rec = self.recording(s, name)
            link = os.path.join(rec_dir, problem_name + ".jsonl")
            os.symlink(os.path.relpath(rec, rec_dir), link)
            identity[problem_name] = vkt.sha256_file(rec)
            if s is not space:
                with open(rec) as f:
                    learning[problem_name] = sum(1 for _ in f)
        self.check_layout(space, folder, variant)
        return folder, identity, learning

    def check_layout(self, space, folder, variant):
        """The leak check on the files: no recording of the replayed kernel but the replayed one (default), none of
        the replayed GPU's cache under another name (transfer), and the replay device's folder alone."""
        own_folder, own_name = self.problems[(space.kernel, None)]
        own_family = _family_text(own_folder)
        own_rec = self.recordings[(space.id, own_name)]
        rec_root = os.path.join(folder, "recordings")
        if os.listdir(rec_root) != [space.slug]:
            raise LeakError(f"{folder}: recordings of other devices ({', '.join(os.listdir(rec_root))})")
        for name in os.listdir(os.path.join(rec_root, space.slug)):
            path = os.path.realpath(os.path.join(rec_root, space.slug, name))
            problem = name[: -len(".jsonl")]
            if path == os.path.realpath(own_rec):
                continue
            same_kernel = _family_text(os.path.join(folder, "problems", problem)) == own_family
            if same_kernel and variant == "default":
                raise LeakError(f"{space.id}: the default variant's resources hold {name}, a recording of the "
                                f"replayed kernel")
            if same_kernel and _recorded_device(path) == _recorded_device(own_rec):
                raise LeakError(f"{space.id}: {name} was recorded on the replayed device")


class LeakError(RuntimeError):
    pass


class CliError(RuntimeError):
    """A kerncast-cli command that failed; `said` is what it printed."""

    def __init__(self, what, cmd, code, said):
        super().__init__(f"{what}: {' '.join(cmd)} exited {code}: {said}")
        self.said = said


def _family_text(problem_folder):
    path = os.path.join(problem_folder, "family.cu")
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _recorded_device(recording):
    with open(recording) as f:
        header = json.loads(f.readline())
    device = header.get("device") or header.get("header", {}).get("device") or {}
    return json.dumps(device, sort_keys=True)


def run_kerncast(task):
    """One search at the largest budget. Returns the configurations it measured in order ("v1,..." or a label for
    a measurement of no configuration of the space), the wall time, the leak check's verdict, and the forecast
    quality after FORECAST_AFTER measurements on the measured candidates and on every forecast of a configuration."""
    (key, method, cli, resources, resources_option, problem, slug, budget, seed, keys, default, truth, learning,
     keep) = task
    fd, run = tempfile.mkstemp(prefix=f"kerncast-hub-{slug}-{problem}-{seed}-", suffix=".sqlite")
    os.close(fd)
    os.remove(run)
    env = dict(os.environ, KERNCAST_RESOURCES=resources)
    cmd = [cli, "--json", "search", "--problem", os.path.join(resources, "problems", problem), "--device",
           "replay:" + slug, "--surrogate", "local", "--gating", "selective", "--budget", str(budget), "--seed",
           str(seed), "--run", run, "--quiet"]
    if resources_option:
        cmd[1:1] = ["--resources", resources]
    started = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.monotonic() - started
        if p.returncode != 0:
            text = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()
            return key, method, budget, seed, {"error": " ".join(text)[-400:]}
        events = subprocess.run([cli, "export", "--run", run, "--format", "events-jsonl"], capture_output=True,
                                text=True, check=True, env=env).stdout
    finally:
        if os.path.exists(run):
            if keep:
                # The run file, to open in the workbench (File > Open Run) or to export: one per space, method, seed.
                os.makedirs(keep, exist_ok=True)
                shutil.move(run, os.path.join(keep, f"{key[0]}-{key[1]}-{method}-s{seed}.sqlite"))
            else:
                os.remove(run)
    result = read_events(events, keys, default, truth, learning, problem, method)
    result["seconds"] = round(seconds, 3)
    return key, method, budget, seed, result


def read_events(events, keys, default, truth, learning, problem, method):
    """The search's measurements and forecasts from its event log, checked for leaks."""
    config = {}  # candidate id -> "v1,v2,..." of the space
    labels = {}
    measured = []
    forecast_rows = {"measured": [], "all": [], "audited": []}
    audited = set()  # candidates the gate trusted and measured anyway (the epsilon-audit share)
    last_forecast = {}  # candidate id -> (probabilities, log speedup, anchor id, measurements before it)
    leaks, reference_id, reference_ms = [], None, None
    forecasts = explained = 0
    base_programs = sum(learning.values())
    for line in events.splitlines():
        e = json.loads(line)
        kind = e["kind"]
        if kind == "candidate":
            c = e["candidate"]
            labels[c["id"]] = c.get("label", "")
            t = c.get("tunables") or {}
            if c.get("mutator") == "reference":
                reference_id = c["id"]
            elif all(k in t for k in keys):
                config[c["id"]] = ",".join(str(t[k]) for k in keys)
        elif kind == "forecast":
            f = e["forecast"]
            cid = e["candidate_id"]
            forecasts += 1
            m = REASONING.search(f.get("reasoning", ""))
            if m or "nothing to learn from yet" in f.get("reasoning", "") or "same program as" in f.get(
                    "reasoning", ""):
                explained += 1
            if m:
                programs, own = int(m.group(2)), int(m.group(3))
                if m.group(4) == problem and own > len(measured):
                    leaks.append(f"a forecast of #{cid} after {len(measured)} measurements had learned {own} "
                                 f"programs of '{problem}'")
                if programs > base_programs + len(measured):
                    leaks.append(f"a forecast of #{cid} after {len(measured)} measurements had learned {programs} "
                                 f"programs, more than the {base_programs} lines of the recordings it may learn "
                                 f"from and its own measurements")
            s = SIBLINGS.search(f.get("reasoning", ""))
            if s and int(s.group(1)) > 0 and method == KERNCAST:
                leaks.append(f"a forecast of #{cid} was stacked with {s.group(1)} sibling problems that measured "
                             f"the same programs (only the replayed kernel's recordings measure them)")
            if f.get("log_mean") is None:
                continue
            log_speedup = math.log(f.get("anchor_speedup", 1.0)) + f["log_mean"]
            entry = (f["probabilities"], log_speedup, f.get("anchor_id", 0), f.get("anchor_speedup", 1.0),
                     len(measured), f.get("uncalibrated") or f["probabilities"])
            last_forecast[cid] = entry
            if cid in config and len(measured) >= FORECAST_AFTER:
                forecast_rows["all"].append((cid, entry))
        elif kind == "measurement":
            m = e["measurement"]
            if m.get("device_kind") == "compiler" or m.get("status") == "not_recorded":
                continue
            cid = e["candidate_id"]
            if cid in config:
                measured.append(config[cid])
            elif cid == reference_id:
                # The reference is the T1 default configuration: an evaluation of it when it is in the space.
                measured.append(default if default in truth else "reference")
            else:
                measured.append(labels.get(cid, "?"))
            if cid in last_forecast and last_forecast[cid][4] >= FORECAST_AFTER and cid in config:
                forecast_rows["measured"].append((cid, last_forecast[cid]))
            # Every audited measurement, the first 30 included: the audit share is small.
            if cid in audited and cid in last_forecast and cid in config:
                forecast_rows["audited"].append((cid, last_forecast[cid]))
            if cid == reference_id and m.get("candidate") and m["candidate"].get("median_us"):
                reference_ms = m["candidate"]["median_us"] / 1000.0
            elif m.get("reference") and m["reference"].get("median_us") and reference_ms is None:
                reference_ms = m["reference"]["median_us"] / 1000.0
        elif kind == "event" and e.get("event") == "gating":
            if e.get("payload", {}).get("decision") == "audit":
                audited.add(e["payload"].get("candidate"))

    def rows(kind, as_given=False):
        """(probabilities, true bin, forecast log speedup over the reference, true one): the truths from the cache;
        an anchor that is the reference takes the reference's recorded time. as_given: the probabilities as the
        surrogate gave them, before the search recalibrated them (the same forecasts otherwise)."""
        out = []
        t_ref = reference_ms or truth.get(default)
        for cid, (stored, log_s, anchor_id, _, _, given) in forecast_rows[kind]:
            probs = given if as_given else stored
            t = truth.get(config.get(cid))
            t_anchor = truth.get(config.get(anchor_id)) if anchor_id else t_ref
            if t is None or t_anchor is None or t_ref is None:
                out.append((probs, 0, log_s, 0.0))  # a failure, or an anchor the cache does not know
                continue
            out.append((probs, bin_of(t_anchor / t), log_s, math.log(t_ref / t)))
        return out

    if forecasts and not explained:
        leaks.append(f"none of the {forecasts} forecasts' reasoning says what the model learned (expected "
                     f"'... from N pairs of M programs, K of pack ...'): the leak check cannot be made")
    quality = {k: forecast_quality(rows(k)) for k in ("measured", "all", "audited")}
    quality["audited_count"] = len(forecast_rows["audited"])
    for k in ("measured", "all", "audited"):
        if quality[k]:
            given = forecast_quality(rows(k, as_given=True))
            quality[k]["as_given"] = {"brier_skill": given["brier_skill"], "crps_skill": given["crps_skill"]}
    return {"measured": measured, "leaks": leaks[:5], "leak_count": len(leaks), "forecast_quality": quality,
            "measurements": len(measured)}


# ----------------------------------------------------------------------------------------------------------------
# The run


def _dispatch(guarded):
    name, deadline, task = guarded
    if deadline and time.time() > deadline:
        return None
    return {"kt": vkt.run_kernel_tuner, "kc": run_kerncast}[name](task)


def kt_values(space, result):
    """A Kernel Tuner result as the cache's times of the unique configurations it evaluated (None: failed)."""
    return [t if t is not None else None for t in result["times_ms"]]


def kc_values(space, result):
    """A search's measurements as the cache's times; its reference is the problem's reference configuration."""
    return [space.truth.get(space.reference if c == "reference" else c) for c in result["measured"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel_tuner", nargs="?", default="", help="Kernel Tuner's source folder")
    ap.add_argument("--constraint", default="", help="python-constraint's source folder")
    ap.add_argument("--hub", default="", help="a checkout of the AutoTuningAssociation benchmark_hub")
    ap.add_argument("--kerncast-cli", default=os.path.join(ROOT, "build", "app", "kerncast-cli"))
    ap.add_argument("--budgets", default="20,50,100,200")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--kerncast-seeds", type=int, default=0, help="Kerncast's seeds (default: --seeds)")
    ap.add_argument("--strategies", default="", help="Kernel Tuner strategies (default: every one that runs here)")
    ap.add_argument("--spaces", default="", help="KERNEL/GPU,... (default: every NVIDIA space of the hub)")
    ap.add_argument("--variants", default="default,transfer", help="Kerncast's variants: default, transfer")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "vs-kernel-tuner-hub-cache"))
    side = ap.add_mutually_exclusive_group()
    side.add_argument("--skip-kerncast", action="store_true")
    side.add_argument("--only-kerncast", action="store_true")
    ap.add_argument("--kerncast-id", default="", help="key Kerncast's results by this instead of the binary's SHA-256")
    ap.add_argument("--keep-runs", default="", metavar="DIR",
                    help="keep each Kerncast search's run file in DIR (KERNEL-GPU-METHOD-sSEED.sqlite) to open in "
                         "the workbench or export; by default they are deleted once scored")
    ap.add_argument("--stop-after", type=float, default=0, help="start no run after this many seconds")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--plan", action="store_true", help="time one space, estimate the whole run, and stop")
    ap.add_argument("--json", default="")
    ap.add_argument("--check-methodology", default="", metavar="SRC",
                    help="compare the methodology score with autotuning_methodology's own code (a source checkout) "
                         "on random runs, and stop")
    a = ap.parse_args(argv)
    if a.check_methodology:
        worst = check_methodology(a.check_methodology)
        print(f"{'PASS' if worst < 1e-9 else 'FAIL'}: the methodology curve differs from autotuning_methodology's "
              f"by at most {worst:.3g} over 20 random spaces and sets of runs")
        sys.exit(0 if worst < 1e-9 else 1)
    if not a.hub:
        ap.error("--hub (a checkout of the AutoTuningAssociation benchmark_hub) is needed")
    if a.kernel_tuner and not a.constraint:
        ap.error("--constraint (python-constraint's source folder) is needed with Kernel Tuner's")
    if not a.kernel_tuner and not (a.only_kerncast or a.report_only):
        ap.error("Kernel Tuner's source folder is needed (only --only-kerncast and --report-only run without it)")
    budgets = sorted(int(b) for b in a.budgets.split(",") if b)
    variants = [v for v in a.variants.split(",") if v]
    for v in variants:
        if v not in VARIANT_METHOD:
            ap.error(f"unknown variant '{v}' (expected default or transfer)")
    kc_seeds = a.kerncast_seeds or a.seeds
    if a.keep_runs:
        a.keep_runs = os.path.abspath(a.keep_runs)

    workdir = os.path.join(a.cache, "work")
    os.makedirs(workdir, exist_ok=True)
    spaces, notes = discover(a.hub)
    wanted = [s for s in a.spaces.split(",") if s]
    loaded = []
    kept = {}  # (kernel, device slug) -> the cache searched for it
    for s in spaces:
        why = s.load()
        if not why and (s.kernel, s.slug) in kept:
            why = f"the same kernel and GPU ({s.slug}) as {kept[(s.kernel, s.slug)]}"
        if why:
            notes.append(f"{os.path.relpath(s.cache_gz, a.hub)}: left out: {why}")
            s.text = None
        else:
            kept[(s.kernel, s.slug)] = os.path.relpath(s.cache_gz, a.hub)
            s.keep(workdir)
            loaded.append(s)
    # Every space is learning material for the others (layout); --spaces picks the ones searched and scored.
    all_spaces = loaded
    spaces = [s for s in loaded if not wanted or s.id in wanted]
    if not spaces:
        sys.exit("error: no NVIDIA space of a CUDA kernel to run:\n  " + "\n  ".join(notes))

    kerncast_version = kerncast_sha = None
    kc = None
    kc_missing = None
    if os.path.exists(a.kerncast_cli):
        kerncast_version = subprocess.run([a.kerncast_cli, "--version"], capture_output=True,
                                          text=True).stdout.strip()
        kerncast_sha = a.kerncast_id or vkt.sha256_file(a.kerncast_cli)
        kc = KerncastSide(a.kerncast_cli, os.path.join(workdir, "kerncast"), kerncast_sha)
        kc_missing = kc.available()
    else:
        kc_missing = f"no {a.kerncast_cli} (build the kerncast-cli target)"
    if kc and not kc_missing:
        # A T1 file Kerncast cannot turn into a problem (no arguments to verify with, say) leaves its spaces out of
        # the comparison for every method, with the import's own reason.
        refused = {}
        for s in loaded:
            if s.kernel not in refused:
                try:
                    kc.problem(s)
                    refused[s.kernel] = None
                except CliError as e:
                    refused[s.kernel] = e.said
                    notes.append(f"{os.path.relpath(s.t1, a.hub)}: left out: kerncast-cli import --t1 refuses it "
                                 f"({refused[s.kernel]})")
        all_spaces = [s for s in loaded if not refused.get(s.kernel)]
        spaces = [s for s in all_spaces if not wanted or s.id in wanted]
        if not spaces:
            sys.exit("error: no NVIDIA space of a CUDA kernel to run:\n  " + "\n  ".join(notes))

    kt_identity, kt_line = None, ""
    if a.kernel_tuner:
        kt_identity, kt_line = vkt.kernel_tuner_identity(a.kernel_tuner, a.constraint)
        # Kernel Tuner searches the T1 file's space here (failures included), not tune_cache's.
        kt_identity["space"] = "t1-restrictions"
    print(f"Kerncast {kerncast_version or '(absent)'}" + (f" (sha256 {kerncast_sha[:16]})" if kerncast_sha else "")
          + f"; {kt_line or 'Kernel Tuner not run'}; Python {platform.python_version()}; {os.cpu_count()} CPUs")

    strategies, cannot = [], {}
    if kt_identity:
        vkt._init_worker(a.kernel_tuner, a.constraint)
        smallest = min(spaces, key=lambda s: len(s.truth))
        asked = [s for s in a.strategies.split(",") if s]
        available = vkt.strategy_availability(asked, (None, smallest.cache_json, smallest.keys))
        strategies = asked or [s for s, why in available.items() if why is None]
        cannot = {s: why for s, why in available.items() if why and (s in strategies or not asked)}
        strategies = [s for s in strategies if available.get(s) is None]

    cache = vkt.ResultCache(a.cache)
    kt_tasks, kc_tasks = [], []
    kc_methods = []
    if kt_identity:
        for s in spaces:
            for st in strategies:
                have = cache.load((s.kernel, s.gpu), st, dict(kt_identity, cache_sha256=s.sha256))
                kt_tasks += [((s.kernel, s.gpu), s.cache_json, s.keys, st, b, seed, tuple(s.restrictions))
                             for b in budgets for seed in range(1, a.seeds + 1) if f"b{b}-s{seed}" not in have]
    kc_error = None
    if kc and not kc_missing:
        kc_methods = [VARIANT_METHOD[v] for v in variants]
        try:
            kc.prepare(all_spaces, variants, a.jobs)
            for s in all_spaces:
                # A T1 default that breaks a condition is replaced by the nearest valid configuration on import.
                with open(os.path.join(kc.problem(s)[0], "problem.json")) as f:
                    ref = json.load(f).get("reference_configuration") or {}
                if all(k in ref for k in s.keys):
                    s.reference = ",".join(str(ref[k]) for k in s.keys)
            for s in spaces:
                for v in variants:
                    resources, identity, learning = kc.layout(s, all_spaces, v)
                    folder, name = kc.problem(s)
                    have = cache.load((s.kernel, s.gpu), VARIANT_METHOD[v], {
                        "kerncast_cli_id": kerncast_sha, "kerncast": kerncast_version, "recordings": identity,
                        "problem_family_sha256": _family_text(folder), "variant": v})
                    kc_tasks += [((s.kernel, s.gpu), VARIANT_METHOD[v], a.kerncast_cli, resources,
                                  kc.resources_option, name, s.slug, max(budgets), seed, s.keys, s.reference, s.truth,
                                  learning, a.keep_runs)
                                 for seed in range(1, kc_seeds + 1)
                                 if f"b{max(budgets)}-s{seed}" not in have and not a.skip_kerncast]
        except LeakError:
            raise
        except RuntimeError as e:
            kc_error = str(e)
            kc_tasks = []
    if a.plan:
        plan(a, spaces, strategies, budgets, kc_seeds, kc_tasks, kt_tasks)
        return
    if a.report_only or a.only_kerncast:
        kt_tasks = []
    if a.report_only:
        kc_tasks = []
    # Seed by seed over every space, so that a run stopped early leaves every space as many seeds.
    kc_tasks.sort(key=lambda t: (t[8], t[1], t[0]))
    kt_tasks.sort(key=lambda t: (t[5], t[4], t[3], t[0]))
    print(f"{len(spaces)} spaces ({', '.join(f'{s.id} ({len(s.truth)})' for s in spaces)}); to run now: "
          f"{len(kt_tasks)} Kernel Tuner runs, {len(kc_tasks)} Kerncast searches (the rest from {a.cache})",
          file=sys.stderr)
    leaks = []
    if kt_tasks or kc_tasks:
        init = (vkt._init_worker, (a.kernel_tuner, a.constraint)) if kt_tasks else (None, ())
        started = time.monotonic()
        deadline = time.time() + a.stop_after if a.stop_after else 0
        skipped = 0
        with multiprocessing.Pool(a.jobs, initializer=init[0], initargs=init[1]) as pool:
            guarded = [("kc", deadline, t) for t in kc_tasks] + [("kt", deadline, t) for t in kt_tasks]
            for i, done in enumerate(pool.imap_unordered(_dispatch, guarded, chunksize=1), start=1):
                if done is None:
                    skipped += 1
                    continue
                space, method, b, seed, result = done
                if result.get("leak_count"):
                    leaks.append((space, method, seed, result["leaks"]))
                    print(f"\nLEAK in {space[0]}/{space[1]} {method} seed {seed}: {result['leaks'][0]}",
                          file=sys.stderr)
                    continue  # never cached: a leaking search is no result
                cache.put(space, method, b, seed, result)
                if i % 20 == 0 or i == len(guarded) or method in (KERNCAST, TRANSFER):
                    print(f"\r{i}/{len(guarded)} runs ({time.monotonic() - started:.0f} s)   ", end="",
                          file=sys.stderr, flush=True)
        print("", file=sys.stderr)
        if skipped:
            print(f"--stop-after: {skipped} runs not started (run again to continue)", file=sys.stderr)
    summary = report(a, spaces, strategies, kc_methods, budgets, kc_seeds, cache, notes, cannot,
                     kc_missing or kc_error, kt_line, kerncast_version, kerncast_sha)
    if leaks:
        summary["leaks"] = [{"space": f"{s[0]}/{s[1]}", "method": m, "seed": seed, "what": w}
                            for s, m, seed, w in leaks]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2, default=lambda x: None)
    if leaks:
        sys.exit(f"error: {len(leaks)} Kerncast searches learned what their variant must not (see LEAK above); "
                 f"their results were not kept")


def plan(a, spaces, strategies, budgets, kc_seeds, kc_tasks, kt_tasks):
    """Times every strategy at every budget and one Kerncast search per variant on the largest space, one seed,
    and extrapolates to the runs still to do."""
    big = max(spaces, key=lambda s: len(s.truth))
    per_run = {}
    for st in strategies:
        for b in budgets:
            started = time.monotonic()
            vkt.run_kernel_tuner(((big.kernel, big.gpu), big.cache_json, big.keys, st, b, 1, tuple(big.restrictions)))
            per_run[(st, b)] = time.monotonic() - started
    kt_total = sum(per_run[(t[3], t[4])] for t in kt_tasks if (t[3], t[4]) in per_run)
    print(f"Plan from {big.id} ({len(big.truth)} configurations), seed 1, on this machine:")
    for st in strategies:
        print(f"  {st:24s} " + ", ".join(f"budget {b}: {per_run[(st, b)]:.2f} s" for b in budgets))
    kc_total = 0.0
    for method in sorted({t[1] for t in kc_tasks}):
        task = next((t for t in kc_tasks if t[1] == method and t[0] == (big.kernel, big.gpu)), None)
        if not task:
            continue
        started = time.monotonic()
        r = run_kerncast(task[:8] + (1,) + task[9:])[4]
        took = time.monotonic() - started
        n = sum(1 for t in kc_tasks if t[1] == method)
        kc_total += took * n
        print(f"  {method:24s} {took:.1f} s for one search at budget {max(budgets)} (a cold one: the base model "
              f"trains for each seed)" + (f": {r['error']}" if "error" in r else
                                          f", {r.get('measurements')} measurements"))
    print(f"Still to run: {len(kt_tasks)} Kernel Tuner runs ~{kt_total / 60:.0f} CPU-minutes, {len(kc_tasks)} "
          f"Kerncast searches ~{kc_total / 60:.0f} CPU-minutes; with --jobs {a.jobs}: "
          f"~{(kt_total + kc_total) / max(1, a.jobs) / 60:.0f} minutes")


def report(a, spaces, strategies, kc_methods, budgets, kc_seeds, cache, notes, cannot, kc_missing, kt_line,
           kerncast_version, kerncast_sha):
    methods = kc_methods + strategies
    top = max(budgets)
    runs = {}  # (method, space id, budget) -> [values per seed]
    errors = {}
    for s in spaces:
        for m in methods:
            results = cache.files.get(cache._path((s.kernel, s.gpu), m), {}).get("results", {})
            is_kc = m in (KERNCAST, TRANSFER)
            for b in budgets:
                for seed in range(1, (kc_seeds if is_kc else a.seeds) + 1):
                    r = results.get(f"b{top if is_kc else b}-s{seed}")
                    if r is None:
                        continue
                    if "error" in r:
                        errors.setdefault((m, r["error"][:200]), set()).add(s.id)
                        continue
                    vals = (kc_values if is_kc else kt_values)(s, r)[:b]
                    runs.setdefault((m, s.id, b), []).append(vals)
    print(f"\nSpaces: {len(spaces)} ({', '.join(f'{s.id} ({len(s.truth)} configurations)' for s in spaces)}).")
    if notes:
        print("Left out of the hub checkout:")
        for n in notes:
            print(f"  {n}")
    if kc_missing:
        print(f"Kerncast's side did not run: {kc_missing}")
    summary = {"versions": {"kerncast": kerncast_version, "kerncast_cli_id": kerncast_sha, "kernel_tuner": kt_line,
                            "python": platform.python_version()},
               "budgets": budgets, "seeds": a.seeds, "kerncast_seeds": kc_seeds,
               "spaces": {s.id: {"configurations": len(s.truth), "failed": sum(t is None for t in s.truth.values()),
                                 "optimum_ms": s.optimum, "t1_default": s.default,
                                 "t1_default_in_space": s.default in s.truth, "reference": s.reference,
                                 "median_compile_plus_benchmark_ms": s.compile_benchmark_ms, "slug": s.slug}
                          for s in spaces},
               "left_out": notes, "cannot_run": cannot, "kerncast_missing": kc_missing,
               "methodology_score": "autotuning_methodology (src/autotuning_methodology) report_experiments.py "
                                    "get_strategy_scores / get_strategies_aggregated_performance, baseline.py "
                                    "Baseline.get_standardised_curves and RandomSearchCalculatedBaseline."
                                    "_get_random_curve, curves.py StochasticOptimizationAlgorithm."
                                    "get_curve_over_fevals; over function evaluations 1..budget",
               "methods": {}}
    table = {}  # (method, space, budget) -> dict
    for (m, sid, b), rs in runs.items():
        s = next(x for x in spaces if x.id == sid)
        fr = [s.optimum / min(v for v in vals if v is not None) if any(v is not None for v in vals) else 0.0
              for vals in rs]
        row = {"seeds": len(rs), "best_fraction": median(fr),
               "methodology_score": methodology_score(rs, s.sorted_times, b),
               "measured": median([len(v) for v in rs])}
        for t in TARGETS:
            row[f"evaluations_to_{int(t * 100)}"] = median([evaluations_to(v, s.optimum, t, b) for v in rs])
        table[(m, sid, b)] = row
        summary["methods"].setdefault(m, {}).setdefault(str(b), {}).setdefault("per_space", {})[sid] = row
    for m in methods:
        for b in budgets:
            rows = [table[(m, s.id, b)] for s in spaces if (m, s.id, b) in table]
            if not rows:
                continue
            agg = {"spaces": len(rows), "median_best_fraction": median([r["best_fraction"] for r in rows]),
                   "methodology_score": statistics.fmean(r["methodology_score"] for r in rows)}
            for t in TARGETS:
                k = f"evaluations_to_{int(t * 100)}"
                agg["median_" + k] = median([r[k] for r in rows])
            summary["methods"][m][str(b)]["aggregate"] = agg

    def agg(m, b, k):
        return summary["methods"].get(m, {}).get(str(b), {}).get("aggregate", {}).get(k)

    n = len(spaces)
    print(f"\nAll {n} spaces: methodology score (autotuning_methodology's, over evaluations 1..budget; mean over "
          f"spaces) / median over spaces of the median best fraction of the optimum; Kernel Tuner {a.seeds} seeds, "
          f"Kerncast {kc_seeds} (one search at {top} scored by its first evaluations).\n")
    print("| method | " + " | ".join(f"budget {b}: score / best" for b in budgets) + f" | to 90% / 95% at {top} |")
    print("|---|" + "---|" * (len(budgets) + 1))
    for m in methods:
        cells = []
        for b in budgets:
            sc, bf, ns = agg(m, b, "methodology_score"), agg(m, b, "median_best_fraction"), agg(m, b, "spaces")
            cells.append(f"{sc:+.3f} / {bf:.3f}" + (f" ({ns} of {n})" if ns and ns < n else "")
                         if sc is not None else "- / -")
        e90, e95 = agg(m, top, "median_evaluations_to_90"), agg(m, top, "median_evaluations_to_95")
        cells.append(f"{e90:g} / {e95:g}" if e90 is not None else "- / -")
        print(f"| {m} | " + " | ".join(cells) + " |")

    for b in budgets:
        print(f"\nPer space at budget {b}: methodology score / median best fraction / median evaluations to 95% "
              f"(budget + 1 = not reached).\n")
        print("| method | " + " | ".join(s.id for s in spaces) + " |")
        print("|---|" + "---|" * n)
        for m in methods:
            cells = []
            for s in spaces:
                r = table.get((m, s.id, b))
                cells.append(f"{r['methodology_score']:+.3f} / {r['best_fraction']:.3f} / "
                             f"{r['evaluations_to_95']:g}" if r else "-")
            print(f"| {m} | " + " | ".join(cells) + " |")

    # Forecast quality and time per measurement (Kerncast).
    quality = {}
    for m in kc_methods:
        print(f"\n{m}: forecasts made after the {FORECAST_AFTER}th measurement (median over seeds): on the measured "
              f"candidates and on every forecast of a configuration; Kendall tau-b of forecast and true log speedup "
              f"over the reference; Brier and CRPS skill against the climatology of the scored forecasts' own true "
              f"bins; in brackets the same forecasts as the surrogate gave them, before the search recalibrated "
              f"them against its measured outcomes. Audited: the candidates the gate trusted and measured anyway "
              f"(the epsilon-audit share, a random sample of the trusted ones; every one, the first 30 measurements "
              f"included), the calibration a selective search can show without the selection's bias. Wall time per measurement against the cache's median compile + "
              f"benchmark time per configuration; the hub's caches carry no static reports, so these searches "
              f"compile none, and a search of a family this large on a GPU compiles a configuration only when it "
              f"measures it (search --static-reports, 'auto'), which the recorded compile time stands for.\n")
        print("| space | measured: n / tau-b / Brier skill / CRPS skill | all: n / tau-b / Brier skill / CRPS skill "
              "| audited: n / tau-b / Brier skill / CRPS skill | s per measurement | recorded compile + benchmark s |")
        print("|---|---|---|---|---|---|")
        for s in spaces:
            results = cache.files.get(cache._path((s.kernel, s.gpu), m), {}).get("results", {})
            rs = [r for k, r in results.items() if k.startswith(f"b{top}-") and "error" not in r]
            if not rs:
                continue
            cells, entry = [], {}
            for kind in ("measured", "all", "audited"):
                qs = [r["forecast_quality"][kind] for r in rs if r.get("forecast_quality", {}).get(kind)]
                if not qs:
                    cells.append("-")
                    continue
                med = {k: median([q[k] for q in qs if q[k] == q[k]]) for k in ("n", "tau_b", "brier_skill",
                                                                                 "crps_skill")}
                given = [q["as_given"] for q in qs if q.get("as_given")]
                if given:
                    med["as_given"] = {k: median([g[k] for g in given if g[k] == g[k]])
                                       for k in ("brier_skill", "crps_skill")}
                entry[kind] = med
                cells.append(f"{med['n']:g} / {med['tau_b']:.2f} / {med['brier_skill']:+.3f} / "
                             f"{med['crps_skill']:+.3f}" + (f" (as given: {med['as_given']['brier_skill']:+.3f} / "
                                                            f"{med['as_given']['crps_skill']:+.3f})"
                                                            if "as_given" in med else ""))
            per = median([r["seconds"] / max(1, r["measurements"]) for r in rs])
            entry["seconds_per_measurement"] = per
            entry["recorded_compile_plus_benchmark_s"] = (s.compile_benchmark_ms or float("nan")) / 1000.0
            quality.setdefault(m, {})[s.id] = entry
            recorded = entry["recorded_compile_plus_benchmark_s"]
            print(f"| {s.id} | {cells[0]} | {cells[1]} | {cells[2]} | {per:.3f} | {recorded:.3f} |")
    summary["forecast_quality"] = quality

    # Targets.
    checks = []
    if KERNCAST in kc_methods and strategies:
        for b in (100, 200):
            if b not in budgets:
                continue
            kc_score = agg(KERNCAST, b, "methodology_score")
            best = max(((agg(st, b, "methodology_score"), st) for st in strategies
                        if agg(st, b, "methodology_score") is not None), default=None)
            if kc_score is not None and best:
                checks.append((kc_score >= best[0], f"aggregate methodology score at budget {b}: Kerncast "
                                                    f"{kc_score:+.3f} >= best Kernel Tuner strategy ({best[1]}, "
                                                    f"{best[0]:+.3f})"))
        if 50 in budgets:
            ok, total, where = 0, 0, []
            for s in spaces:
                kcr = table.get((KERNCAST, s.id, 50))
                best = max(((table[(st, s.id, 50)]["best_fraction"], st) for st in strategies
                            if (st, s.id, 50) in table), default=None)
                if not kcr or not best:
                    continue
                total += 1
                if kcr["best_fraction"] >= best[0] * 0.995:
                    ok += 1
                else:
                    where.append(f"{s.id} {kcr['best_fraction']:.3f} against {best[1]} {best[0]:.3f}")
            if total:
                checks.append((ok >= 0.75 * total, f"budget 50: Kerncast ahead of or within 0.5% of each space's "
                                                   f"best strategy (median best fraction) on {ok} of {total} spaces "
                                                   f"(>= 75%)" + (f"; behind on {'; '.join(where)}" if where else "")))
        kc95 = agg(KERNCAST, top, "median_evaluations_to_95")
        best = min(((agg(st, top, "median_evaluations_to_95"), st) for st in strategies
                    if agg(st, top, "median_evaluations_to_95") is not None), default=None)
        if kc95 is not None and best:
            checks.append((kc95 <= 0.6 * best[0], f"median over spaces of evaluations to 95% at budget {top}: "
                                                  f"Kerncast {kc95:g} <= 0.6 x the best strategy's ({best[1]}, "
                                                  f"{best[0]:g}: {0.6 * best[0]:g})"))
    if KERNCAST in quality:
        for kind in ("measured", "all"):
            got = [(sid, e[kind]) for sid, e in quality[KERNCAST].items() if kind in e]
            if not got:
                continue
            good = [sid for sid, q in got if q["tau_b"] >= 0.4 and q["brier_skill"] > 0 and q["crps_skill"] > 0]
            checks.append((len(good) >= 0.75 * len(got),
                           f"forecasts (no transfer) after the {FORECAST_AFTER}th measurement, "
                           f"{'measured candidates' if kind == 'measured' else 'every forecast of a configuration'}: "
                           f"tau-b >= 0.4 and Brier and CRPS skill > 0 on {len(good)} of {len(got)} spaces (>= 75%)"))
    if KERNCAST in quality:
        costs = [(sid, e["seconds_per_measurement"], e["recorded_compile_plus_benchmark_s"])
                 for sid, e in quality[KERNCAST].items() if e.get("recorded_compile_plus_benchmark_s") == e.get(
                     "recorded_compile_plus_benchmark_s")]
        above = [f"{sid} {own:.3f} s against {rec:.3f} s" for sid, own, rec in costs if not own < rec]
        if costs:
            checks.append((not above, f"cost: Kerncast's own time per measurement below the space's median recorded "
                                      f"compile + benchmark time per configuration on {len(costs) - len(above)} of "
                                      f"{len(costs)} spaces" + (f"; not on {'; '.join(above)}" if above else "")))
    print("\nTargets:")
    for ok, text in checks:
        print(f"  {'PASS' if ok else 'FAIL'}: {text}")
    if not checks:
        print("  (none could be checked: Kerncast's or Kernel Tuner's results are missing)")
    summary["targets"] = [{"pass": ok, "check": text} for ok, text in checks]

    if cannot:
        print("\nKernel Tuner strategies that did not run:")
        for st, why in cannot.items():
            print(f"  {st}: {why}")
    if errors:
        print("\nRuns that failed (left out):")
        for (m, err), where in sorted(errors.items()):
            print(f"  {m} on {', '.join(sorted(where))}: {err}")
        summary["errors"] = [{"method": m, "error": e, "spaces": sorted(w)} for (m, e), w in errors.items()]
    print("\nMethodology score: autotuning_methodology's performance score (src/autotuning_methodology/"
          "report_experiments.py get_strategy_scores), computed here over function evaluations 1..budget; see "
          "methodology_curve in bench/vs_kernel_tuner_hub.py.")
    return summary


if __name__ == "__main__":
    main()
