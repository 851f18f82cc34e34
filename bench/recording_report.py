#!/usr/bin/env python3
"""Summarises recordings: per problem, the reference time, the best seed, how many of the family's configurations are
recorded (recorded/all where some are missing, e.g. in a recording of an earlier family), the best family
configuration, its share of the roofline and its speed against PyTorch eager (when the header has it). A
configuration counts as recorded as the replay device finds it: by the hash of the family's text as it is now and the
configuration's values. Notes below the table name recordings whose entries were measured on several GPUs, and
entries of an earlier text of a family (`kerncast-cli carry` keeps those whose code did not change).

    python3 bench/recording_report.py [resources/recordings/<device>]  (default: every device folder)
"""
import itertools
import json
import pathlib
import re
import sys

from kerncast_sizes import eval_size_expr


def fnv1a(data, h):
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def content_hash(source, tunables):
    """The program's key in a recording (core/candidate.cpp content_hash): its text, then its tunables by name."""
    canonical = source + b"\n//@kerncast-tunables" + b"".join(
        f" {k}={v}".encode() for k, v in sorted(tunables.items()))
    a = fnv1a(canonical, 0xCBF29CE484222325)
    b = fnv1a(canonical, 0x84222325CBF29CE4 ^ a)
    return f"{a:016x}{b:016x}"


def family_configs(family_path):
    """A family program's configurations, each a frozenset of (tunable, value): the product of its tunables' values
    where every where-clause holds (the clauses use the size-expression operators and C's && || !)."""
    tunables = []
    for line in family_path.read_text().splitlines():
        m = re.match(r"\s*//\s*@kerncast\s+tunable\s+(\w+)\s+(.*)$", line)
        if not m:
            continue
        values, _, cond = m.group(2).partition(" where ")
        tunables.append((m.group(1), [int(v) for v in values.split()], cond.strip()))
    names = [t[0] for t in tunables]
    conds = [re.sub(r"!(?!=)", " not ", c.replace("&&", " and ").replace("||", " or ")) for _, _, c in tunables if c]
    configs = set()
    for combo in itertools.product(*(t[1] for t in tunables)):
        env = dict(zip(names, combo))
        if all(eval_size_expr(c, env) for c in conds):
            configs.add(frozenset(env.items()))
    return configs


def report(folder, problems_root):
    rows = []
    notes = []
    total = 0
    for path in sorted(folder.glob("*.jsonl")):
        lines = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
        header, entries = lines[0], lines[1:]
        total += len(entries)
        problem = json.loads((problems_root / header["problem"] / "problem.json").read_text())
        sizes = problem["sizes"]["benchmark"]
        ok = [e for e in entries if e["measurement"]["status"] == "ok"]
        ref = next((e for e in entries if e["label"] == "reference"), None)
        ref_us = ref["measurement"]["candidate"]["median_us"] if ref and ref["measurement"].get("candidate") else None

        def best(prefix):
            cands = [e for e in ok if e["label"].startswith(prefix)]
            return min(cands, key=lambda e: e["measurement"]["candidate"]["median_us"]) if cands else None

        seed, fam = best("seed:"), best("family")
        ceil = header.get("ceilings", {})
        half = any(b["dtype"] in ("f16", "bf16") and b["role"] != "out" for b in problem["buffers"])
        peak = ceil.get("fp32_tflops", 0) * (16 if half else 1)
        bytes_ = eval_size_expr(problem.get("bytes", "0"), sizes)
        flops = eval_size_expr(problem.get("flops", "0"), sizes)
        roof_us = max(bytes_ / (ceil["dram_gbps"] * 1e3) if ceil.get("dram_gbps") else 0,
                      flops / (peak * 1e6) if peak else 0)
        fam_us = fam["measurement"]["candidate"]["median_us"] if fam else None
        eager = header.get("pytorch_eager_us")
        failed = sum(1 for e in entries if e["measurement"]["status"] not in ("ok",))
        family_path = problems_root / header["problem"] / "family.cu"
        # Recorded configurations of the family as it is now: a recording of an earlier family matches few or none.
        configs = family_configs(family_path) if family_path.exists() else set()
        source = family_path.read_bytes() if family_path.exists() else b""
        in_space = [e for e in entries if e["label"].startswith("family") and
                    frozenset((k, int(v)) for k, v in e.get("tunables", {}).items()) in configs]
        current = {e["source_hash"] for e in in_space if e["source_hash"] == content_hash(source, e["tunables"])}
        recorded = len(current)
        size = len(configs)
        earlier = len(in_space) - sum(1 for e in in_space if e["source_hash"] in current)
        if earlier:
            notes.append(f"{header['problem']}: {earlier} configuration(s) of the family's space recorded from an "
                         "earlier text of it, which the replay device does not answer (`kerncast-cli carry` keeps "
                         "those whose code did not change)")
        ref_path = problems_root / header["problem"] / problem.get("reference", "reference.cu")
        if ref and ref_path.exists() and ref["source_hash"] != content_hash(ref_path.read_bytes(), {}):
            notes.append(f"{header['problem']}: the recorded reference is not {ref_path.name} as it is now (edited "
                         "since it was recorded, or this script no longer hashes programs as the engine does)")
        gpus = {}
        for e in entries:
            uuid = e["measurement"].get("device", {}).get("uuid", "")
            if uuid:
                gpus[uuid] = gpus.get(uuid, 0) + 1
        if len(gpus) > 1:
            notes.append(f"{header['problem']}: measured on {len(gpus)} GPUs (" +
                         ", ".join(f"{u[:12]} {n}" for u, n in sorted(gpus.items(), key=lambda g: -g[1])) + ")")
        rows.append([
            header["problem"], len(entries), failed, f"{recorded}/{size}" if recorded < size else str(size),
            f"{ref_us:.1f}" if ref_us else "-",
            f"{seed['measurement']['candidate']['median_us']:.1f} ({seed['label'][5:]})" if seed else "-",
            f"{fam_us:.1f} ({fam['label'][7:]})" if fam else "-",
            f"{roof_us / fam_us:.0%}" if fam_us and roof_us else "-",
            f"{bytes_ / fam_us / 1e3:.0f}" if fam_us else "-",
            f"{flops / fam_us / 1e6:.1f}" if fam_us and flops else "-",
            f"{eager:.1f}" if eager else "-",
            f"{eager / fam_us:.2f}x" if eager and fam_us else "-",
        ])
    head = ["problem", "n", "failed", "family", "reference us", "best seed us", "best family us", "roofline", "GB/s",
            "TFLOP/s", "eager us", "vs eager"]
    print(f"{folder.name}: {total} measurements")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    for n in notes:
        print(n)


def main():
    root = pathlib.Path(__file__).resolve().parent.parent / "resources"
    folders = [pathlib.Path(a) for a in sys.argv[1:]] or sorted(p for p in (root / "recordings").iterdir() if p.is_dir())
    for folder in folders:
        report(folder, root / "problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
