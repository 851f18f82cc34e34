#!/usr/bin/env python3
"""What an LLM-driven search costs: LLM calls, tokens, duplicates and wall time per GPU measurement.

A loopback OpenAI-compatible endpoint answers every request from scripted replies, so the benchmark runs without a
model. A mutation request gets a reply built from the parent kernel in its prompt: a plausible edit (a fast exp, a
launch bound, an unrolled loop, a variant define), a syntax error, a wrong result, the parent again (a duplicate), or
prose without code, drawn from a small pool of ideas per parent and request (a model asked the same question repeats
itself; a varied question widens the pool). A forecast request gets a bin drawn from the candidate's code. The mix is
deterministic for --seed; the token counts are the characters over 4 (a prompt of 42,500 characters: about 10,600
tokens), and every reply counts a further 300 tokens of hidden reasoning.

On a GPU machine, unpack the bundle first (scripts/gpu-check does, or tar -xJf .gpu-bundle/bundle.tar.xz at the
repository root): the benchmark then runs the bundle's kerncast-cli with its libraries.

    python3 bench/llm_cost.py [--device replay:nvidia-h100-80gb-hbm3 | --device cuda:0] [--problem softmax] [--budget 30]
                              [--seeds 1] [--gating selective,top-k,measure-all] [--scenarios mutators,forecaster]
                              [--cli build/app/kerncast-cli] [--json FILE] [-- extra search flags]

With --seeds N the last lines give each search's mean over the seeds, and the best speedup found at the same number of
measurements (e.g. `--seeds 5 --gating selective -- --llm-parents forecast` against the default parents).

Each row is one search (`kerncast-cli search --json`); "no llm" is the same search with the parametric mutator and
the local surrogate only, for the wall-time ratio. The endpoint's own counts give the longest run of replies, for one
parent, whose program was already sent for that parent (or is the parent), answers without a program aside: "streak".
"""
import argparse
import hashlib
import http.server
import json
import os
import pathlib
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
REASONING_TOKENS = 300
BIN_KEYS = ["p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown", "p_minor_slowdown",
            "p_minor_speedup", "p_significant_speedup", "p_high_speedup", "p_extreme_speedup"]


def digest(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode())
        h.update(b"\0")
    return int(h.hexdigest()[:16], 16)


def normalized(code):
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    code = re.sub(r"//[^\n]*", "", code)
    return re.sub(r"\s+", "", code)


def parent_code(prompt):
    at = prompt.find("# Parent to improve")
    if at < 0:
        return None
    start = prompt.find("```cuda\n", at)
    if start < 0:
        return None
    end = prompt.find("\n```", start + 8)
    return prompt[start + 8:end + 1] if end > 0 else None


# ---- edits of a parent ------------------------------------------------------------------------------------------

def nth(text, pattern, k):
    found = [m.start() for m in re.finditer(pattern, text)]
    return found[k % len(found)] if found else None


def fast_exp(src, k):
    at = nth(src, r"(?<![_\w])expf\(", k)
    return None if at is None else src[:at] + "__expf(" + src[at + 5:]


def launch_bounds(src, k):
    m = re.search(r'__global__\s+void\s+(?!__launch_bounds__)', src)
    if not m:
        return None
    return src[:m.end()] + "__launch_bounds__(%d) " % (1024 >> (k % 2)) + src[m.end():]


def unroll(src, k):
    lines = src.split("\n")
    loops = [i for i, l in enumerate(lines) if l.strip().startswith("for (") and
             (i == 0 or not lines[i - 1].strip().startswith("#pragma"))]
    if not loops:
        return None
    i = loops[k % len(loops)]
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    return "\n".join(lines[:i] + [indent + "#pragma unroll %d" % (2 << (k % 3))] + lines[i:])


def variant_define(src, k):
    return "#define KERNCAST_VARIANT_%d 1\n" % (k % 5) + src


PLAUSIBLE = [fast_exp, launch_bounds, unroll, variant_define]


def syntax_error(src, k):
    lines = src.split("\n")
    stmts = [i for i, l in enumerate(lines) if l.rstrip().endswith(";") and not l.lstrip().startswith("//") and
             not l.lstrip().startswith("#")]
    if not stmts:
        return src + "\nthis is not CUDA\n"
    i = stmts[k % len(stmts)]
    lines[i] = lines[i].rstrip()[:-1] + " + undeclared_scale_%d" % (k % 3)
    return "\n".join(lines)


def wrong_result(src, k):
    for a, b in (("fmaxf(", "fminf("), (" += ", " -= "), (" + ", " - ")):
        at = nth(src, re.escape(a), k)
        if at is not None:
            return src[:at] + b + src[at + len(a):]
    return src.replace("1", "2", 1)


def diff_reply(parent, child):
    a, b = parent.split("\n"), child.split("\n")
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and a[len(a) - 1 - j] == b[len(b) - 1 - j]:
        j += 1
    lo = max(i - 1, 0)  # one line of context, so the SEARCH text is never empty
    old, new = a[lo:len(a) - j], b[lo:len(b) - j]
    if not old:
        old, new = a[:1], b[:len(b) - len(a) + 1]
    return "<<<<<<< SEARCH\n" + "\n".join(old) + "\n=======\n" + "\n".join(new) + "\n>>>>>>> REPLACE\n"


class Script:
    """The endpoint's answers and its own counts, by parent."""

    def __init__(self, seed):
        self.seed = seed
        self.lock = threading.Lock()
        self.asked = {}      # parent hash -> requests so far
        self.sent = {}       # parent hash -> normalized programs sent
        self.streak = {}     # parent hash -> duplicates in a row now
        self.max_streak = 0
        self.calls = {"forecast": 0, "rewrite": 0, "diff": 0}

    def mutation(self, prompt, body_key, diff):
        parent = parent_code(prompt)
        if parent is None:
            return "I could not find the parent kernel.", None
        # The ideas come from the code (family configurations share it); a parent is the code with its tunable
        # values (the prompt's parent section), as the search counts parents.
        code = digest(parent)
        section = prompt[prompt.find("# Parent to improve"):prompt.find("# Other measured programs")]
        p = digest(section)
        with self.lock:
            n = self.asked.get(code, 0)
            self.asked[code] = n + 1
        rng = random.Random(digest(self.seed, code, n))
        # The ideas a model has for this exact question: a few, shifted when the question changes.
        offset = digest(self.seed, body_key) % 7
        r = rng.random()
        if r < 0.45:
            idea = offset + rng.randrange(4)
            child = PLAUSIBLE[idea % len(PLAUSIBLE)](parent, idea // len(PLAUSIBLE) + offset)
            what = "a plausible edit"
        elif r < 0.55:
            child, what = parent.replace("\n", "\n// kept as it is\n", 1), "the parent again"
        elif r < 0.70:
            child, what = syntax_error(parent, offset + rng.randrange(2)), "a syntax error"
        elif r < 0.80:
            child, what = wrong_result(parent, offset), "a wrong result"
        else:
            child, what = None, "prose"
        if child is None:
            child, what = (parent.replace("\n", "\n// kept as it is\n", 1), "the parent again")
        key = normalized(child) if what != "prose" else None
        with self.lock:
            seen = self.sent.setdefault(p, {normalized(parent)})
            dup = key is not None and key in seen
            if key is not None:
                seen.add(key)
            if key is not None:  # an answer without a program neither lengthens nor ends a streak
                self.streak[p] = self.streak.get(p, 0) + 1 if dup else 0
            self.max_streak = max(self.max_streak, self.streak.get(p, 0))
        if what == "prose":
            return ("The kernel is memory bound and already reads each element once; I would keep the block "
                    "shape and look at the launch overhead instead. No change is needed.", None)
        if diff:
            return "One change (%s).\n%s" % (what, diff_reply(parent, child)), key
        return "Here is the program (%s).\n\n```cuda\n%s```\n" % (what, child if child.endswith("\n") else
                                                                  child + "\n"), key

    def forecast(self, prompt):
        rng = random.Random(digest(self.seed, "forecast", prompt[-4000:]))
        b = min(8, max(1, int(rng.gauss(4.2, 1.3))))
        args = {"reasoning": "memory bound; the traffic is the same as the parent's"}
        for i, k in enumerate(BIN_KEYS):
            args[k] = 0.6 if i + 1 == b else 0.4 / 7
        args["predicted_bin"] = b
        return args


def make_handler(script, model):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            messages = body.get("messages", [])
            prompt = "\n".join(m.get("content", "") for m in messages)
            message = {"role": "assistant", "content": ""}
            tools = body.get("tools") or []
            names = [t.get("function", {}).get("name") for t in tools]
            if "submit_kernel_runtime_estimate" in names or "submit_kernel_runtime_estimate" in prompt:
                with script.lock:
                    script.calls["forecast"] += 1
                args = script.forecast(prompt)
                if tools:
                    message["tool_calls"] = [{"id": "call_1", "type": "function",
                                              "function": {"name": "submit_kernel_runtime_estimate",
                                                           "arguments": json.dumps(args)}}]
                    message["content"] = None
                else:
                    message["content"] = "```json\n%s\n```" % json.dumps(args)
                reply = json.dumps(args)
            else:
                diff = "<<<<<<< SEARCH" in prompt
                with script.lock:
                    script.calls["diff" if diff else "rewrite"] += 1
                key = json.dumps({k: body.get(k) for k in ("messages", "temperature")}, sort_keys=True)
                reply, _ = script.mutation(messages[-1].get("content", "") if messages else "", key, diff)
                message["content"] = reply
            answer = {"id": "bench", "object": "chat.completion", "model": model,
                      "choices": [{"index": 0, "message": message,
                                   "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                      "usage": {"prompt_tokens": (len(prompt) + 3) // 4,
                                "completion_tokens": (len(reply) + 3) // 4 + REASONING_TOKENS}}
            answer["usage"]["total_tokens"] = answer["usage"]["prompt_tokens"] + answer["usage"]["completion_tokens"]
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class Endpoint:
    def __init__(self, seed, model="bench-scripted"):
        self.script = Script(seed)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.script, model))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d/v1" % self.server.server_address[1]
        self.model = model

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---- searches ---------------------------------------------------------------------------------------------------

def run_store_stats(path):
    db = sqlite3.connect(path)
    out = {"prompt_chars": [], "kinds": {}}
    try:
        for kind, prompt_len, tin, tout, outcome in db.execute(
                "SELECT kind, length(prompt), tokens_in, tokens_out, outcome FROM llm_calls"):
            k = out["kinds"].setdefault(kind, {"calls": 0, "tokens": 0, "duplicates": 0, "failed": 0})
            k["calls"] += 1
            k["tokens"] += (tin or 0) + (tout or 0)
            k["duplicates"] += outcome == "duplicate"
            k["failed"] += outcome == "failed"
            out["prompt_chars"].append(prompt_len or 0)
    except sqlite3.OperationalError:
        pass
    db.close()
    return out


def bundle_build():
    """The build tree of an unpacked GPU bundle (scripts/gpu-bundle) at the repository root, with the environment its
    programs need, or (None, {}) when there is none."""
    marker = ROOT / ".gpu-lib" / "BUILD_DIR"
    if not marker.exists():
        return None, {}
    build = ROOT / pathlib.Path(marker.read_text().strip()).name
    libs = str(ROOT / ".gpu-lib") + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    return build, {"LD_LIBRARY_PATH": libs, "KERNCAST_WORKER": str(build / "app/kerncast-worker"),
                   "KERNCAST_RESOURCES": str(ROOT / "resources")}


def search(args, scenario, gating, seed, extra):
    endpoint = Endpoint(seed) if scenario != "no llm" else None
    with tempfile.TemporaryDirectory() as tmp:
        run = os.path.join(tmp, "run.sqlite")
        cmd = [args.cli, "search", "--problem", args.problem, "--device", args.device, "--gating", gating,
               "--budget", str(args.budget), "--seed", str(seed), "--run", run, "--json", "--quiet"]
        if scenario == "mutators":
            cmd += ["--surrogate", "local", "--mutator", "llm-rewrite", "--mutator", "parametric"]
        elif scenario == "diff":
            cmd += ["--surrogate", "local", "--mutator", "llm-diff", "--mutator", "parametric"]
        elif scenario == "forecaster":
            cmd += ["--surrogate", "llm", "--mutator", "parametric"]
        else:
            cmd += ["--surrogate", "local", "--mutator", "parametric"]
        if endpoint:
            cmd += ["--endpoint", endpoint.url, "--model", endpoint.model]
        cmd += extra
        env = dict(os.environ, XDG_CONFIG_HOME=tmp, **args.env)  # no settings file: the defaults and the flags above
        t0 = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
        wall = time.monotonic() - t0
        if endpoint:
            endpoint.close()
        try:
            summary = json.loads(proc.stdout)
            if "error" in summary:
                raise json.JSONDecodeError(summary["error"], "", 0)
        except json.JSONDecodeError:
            sys.exit("search failed (%s): %s\n%s" % (" ".join(cmd), proc.stdout[-2000:], proc.stderr[-2000:]))
        stats = run_store_stats(run) if os.path.exists(run) else {"prompt_chars": [], "kinds": {}}
    m = max(1, summary.get("measurements", 0))
    prompts = sorted(stats["prompt_chars"])
    return {
        "scenario": scenario, "gating": gating, "seed": seed, "measurements": summary.get("measurements", 0),
        "calls": summary.get("llm_calls", 0), "tokens": summary.get("tokens", 0),
        "cost_usd": summary.get("cost_usd", 0), "duplicates": summary.get("duplicates", 0),
        "tokens_per_measurement": summary.get("tokens", 0) / m, "calls_per_measurement": summary.get("llm_calls", 0) / m,
        "wall_s": wall, "wall_per_measurement": wall / m, "best": summary.get("best_speedup", 0),
        "reason": summary.get("reason", ""), "state": summary.get("state", ""),
        "median_prompt_chars": prompts[len(prompts) // 2] if prompts else 0,
        "dup_streak": endpoint.script.max_streak if endpoint else 0, "kinds": stats["kinds"],
        "llm": summary.get("llm", {}),
    }


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", help="kerncast-cli (default: an unpacked GPU bundle's, else build/app/kerncast-cli)")
    ap.add_argument("--device", default="replay:nvidia-h100-80gb-hbm3")
    ap.add_argument("--problem", default="softmax")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--gating", default="selective,top-k,measure-all")
    ap.add_argument("--scenarios", default="mutators,forecaster")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", help="also write every row to this file")
    args = ap.parse_args(argv)
    bundle, args.env = bundle_build()
    if not args.cli:
        args.cli = str((bundle or ROOT / "build") / "app/kerncast-cli")
    if bundle is None or not args.cli.startswith(str(bundle)):
        args.env = {}
    rows = []
    head = ("%-10s %-11s %4s %5s %6s %10s %9s %6s %6s %7s %7s %6s %7s" %
            ("scenario", "gating", "seed", "meas", "calls", "tokens", "tok/meas", "call/m", "dups", "streak",
             "prompt", "wall", "best"))
    print("device %s, problem %s, budget %d%s" % (args.device, args.problem, args.budget,
                                                   (", extra flags: " + " ".join(extra)) if extra else ""))
    print(head)
    print("-" * len(head))
    for gating in args.gating.split(","):
        for seed in range(1, args.seeds + 1):
            for scenario in ["no llm"] + args.scenarios.split(","):
                r = search(args, scenario, gating, seed, extra if scenario != "no llm" else [])
                rows.append(r)
                print("%-10s %-11s %4d %5d %6d %10d %9.0f %6.1f %6d %7d %7d %6.1f %6.2fx" %
                      (scenario, gating, seed, r["measurements"], r["calls"], r["tokens"],
                       r["tokens_per_measurement"], r["calls_per_measurement"], r["duplicates"], r["dup_streak"],
                       r["median_prompt_chars"], r["wall_s"], r["best"]), flush=True)
                if r["state"] != "finished":
                    print("    %s: %s" % (r["state"], r["reason"]))
    if args.seeds > 1:
        # The same searches over the seeds: the spend, and the best speedup found at the same number of measurements.
        for gating in args.gating.split(","):
            for scenario in ["no llm"] + args.scenarios.split(","):
                rs = [r for r in rows if r["gating"] == gating and r["scenario"] == scenario]
                if not rs:
                    continue
                best = sorted(r["best"] for r in rs)
                print("%s, %s, %d seeds: %.0f tokens, %.1f calls per measurement, %.1f measurements; best %.3fx "
                      "mean, %.3fx median (%.3f-%.3f)" %
                      (gating, scenario, len(rs), sum(r["tokens_per_measurement"] for r in rs) / len(rs),
                       sum(r["calls_per_measurement"] for r in rs) / len(rs),
                       sum(r["measurements"] for r in rs) / len(rs), sum(best) / len(best), best[len(best) // 2],
                       best[0], best[-1]))
    for gating in args.gating.split(","):
        base = [r["wall_s"] for r in rows if r["gating"] == gating and r["scenario"] == "no llm"]
        for scenario in args.scenarios.split(","):
            llm = [r["wall_s"] for r in rows if r["gating"] == gating and r["scenario"] == scenario]
            if base and llm and sum(base) > 0:
                print("%s, %s: wall time %.1fx the search without LLM" % (gating, scenario, sum(llm) / sum(base)))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
