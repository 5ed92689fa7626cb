#!/usr/bin/env python3
"""Turn the results of bench/run.sh into markdown tables.

    python3 bench/report.py [RESULTS_DIR] [--out FILE]

Reads RESULTS_DIR (default bench/results): <dataset>-<condition>.json (hyperfine exports) and their
.meta.json, <dataset>-rss.tsv (peak RSS of one warm run per tool, /usr/bin/time %M),
<dataset>-groups.json (bench/check-groups.py) and machine.txt. Prints:
  - a summary: per dataset and condition, dedup's median wall time, the fastest peer with default
    options, the fastest byte-verifying peer and hand-tuned fclones, each as the ratio
    dedup / peer (< 1 means dedup is faster), with the issue's target for that condition;
  - per dataset and condition: every tool's median, min and max, the ratio dedup / tool, peak RSS,
    and whether its duplicate groups matched;
  - peak RSS per dataset with dedup / fclones.
A run that exited non-zero (a failure, or a kill by run.sh's timeout: exit 137) is flagged and left out
of the "fastest peer" columns.
"""

import argparse
import csv
import glob
import json
import os
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
import benchlib  # noqa: E402

CONDITIONS = ("warm", "cold", "hdd")
DATASET_ORDER = ("flat", "nested", "media", "small", "adversarial", "usr", "rustup")
TARGETS = {  # from the benchmark issue: dedup / peer must be at most this
    "warm": ("fastest", 0.5),
    "cold": ("fastest", 0.6),
    "hdd": ("fastest", 0.8),
}
TUNED_TARGET = {"cold": 0.9}
RSS_TARGET = ("small", 0.7)


def kinds():
    try:
        return {t.name: t.kind for t in benchlib.load_tools()}
    except (OSError, SystemExit):
        return {}


def fmt_s(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def load(results):
    runs = {}  # (dataset, condition) -> dict
    for path in glob.glob(os.path.join(results, "*.json")):
        base = os.path.basename(path)[:-5]
        if base.endswith(".meta") or base.endswith("-groups"):
            continue
        ds, _, cond = base.rpartition("-")
        if cond not in CONDITIONS:
            continue
        with open(path) as f:
            hf = json.load(f)
        meta = {}
        if os.path.exists(os.path.join(results, base + ".meta.json")):
            with open(os.path.join(results, base + ".meta.json")) as f:
                meta = json.load(f)
        tools = {}
        for r in hf["results"]:
            codes = r.get("exit_codes") or []
            tools[r["command"]] = {
                "median": r["median"], "min": r["min"], "max": r["max"], "mean": r["mean"],
                "runs": len(r.get("times") or []), "bad_exits": sorted({c for c in codes if c != 0}),
            }
        runs[(ds, cond)] = {"tools": tools, "order": [r["command"] for r in hf["results"]], "meta": meta}
    rss = {}
    for path in glob.glob(os.path.join(results, "*-rss.tsv")):
        ds = os.path.basename(path)[:-len("-rss.tsv")]
        with open(path) as f:
            rss[ds] = {row["tool"]: row for row in csv.DictReader(f, delimiter="\t")}
    groups = {}
    for path in glob.glob(os.path.join(results, "*-groups.json")):
        ds = os.path.basename(path)[:-len("-groups.json")]
        with open(path) as f:
            g = json.load(f)
        groups[ds] = g
    return runs, rss, groups


def ds_key(ds):
    return (DATASET_ORDER.index(ds) if ds in DATASET_ORDER else len(DATASET_ORDER), ds)


def describe_data(meta):
    m = meta.get("manifest") or {}
    parts = []
    if meta.get("scale") is not None:
        parts.append(f"scale {meta['scale']:g}")
    if m:
        parts.append(f"{m['files']:,} files, {m['dirs']:,} dirs, {m['bytes'] / 1e9:.2f} GB, "
                     f"{m['dup_sets']:,} duplicate sets")
    parts.append(f"`{meta.get('tree', '?')}`")
    return ", ".join(parts)


def ok(t):
    return t is not None and not t["bad_exits"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", default=os.path.join(BENCH_DIR, "results"))
    ap.add_argument("--out", help="write the markdown here instead of stdout")
    a = ap.parse_args()
    runs, rss, groups = load(a.results)
    if not runs:
        sys.exit(f"report.py: no hyperfine results in {a.results}")
    kind = kinds()
    out = []
    w = out.append

    machine = os.path.join(a.results, "machine.txt")
    if os.path.exists(machine):
        w("Machine and settings (`machine.txt`):\n\n```\n" + open(machine).read().strip() + "\n```\n")

    # ---- summary ----
    w("### Summary: dedup / peer, median wall time (< 1: dedup is faster)\n")
    w("| dataset | condition | dedup s | fastest peer (default options) | dedup / it | "
      "fastest exact peer | dedup / it | fclones-tuned | dedup / it | target | met |")
    w("|---|---|---:|---|---:|---|---:|---:|---:|---|---|")
    for (ds, cond) in sorted(runs, key=lambda k: (ds_key(k[0]), CONDITIONS.index(k[1]))):
        tools = runs[(ds, cond)]["tools"]
        d = tools.get("dedup")
        dm = d["median"] if ok(d) else None
        peers = {n: t for n, t in tools.items() if n != "dedup" and ok(t)}
        default = {n: t for n, t in peers.items() if kind.get(n) != "tuned"}
        exact = {n: t for n, t in default.items() if kind.get(n) == "exact"}
        fastest = min(default.items(), key=lambda kv: kv[1]["median"], default=None)
        fexact = min(exact.items(), key=lambda kv: kv[1]["median"], default=None)
        tuned = peers.get("fclones-tuned")
        cells = [ds, cond, fmt_s(dm) if d and ok(d) else ("FAILED" if d else "-")]
        for best in (fastest, fexact):
            if best:
                cells += [f"{best[0]} {fmt_s(best[1]['median'])} s", fmt_ratio(dm, best[1]["median"])]
            else:
                cells += ["-", "-"]
        cells += [fmt_s(tuned["median"]) if tuned else "-", fmt_ratio(dm, tuned["median"] if tuned else None)]
        targ = [f"<= {TARGETS[cond][1]} x fastest"]
        met = []
        if dm is not None and fastest:
            met.append(dm / fastest[1]["median"] <= TARGETS[cond][1])
        if cond in TUNED_TARGET:
            targ.append(f"<= {TUNED_TARGET[cond]} x tuned")
            if dm is not None and tuned:
                met.append(dm / tuned["median"] <= TUNED_TARGET[cond])
        cells += ["; ".join(targ), ("yes" if all(met) else "no") if met else "-"]
        w("| " + " | ".join(cells) + " |")
    w("")

    # ---- per dataset ----
    for ds in sorted({k[0] for k in runs} | set(rss), key=ds_key):
        g = groups.get(ds)
        gsame = {r["tool"]: r["same"] for r in g["tools"]} if g else {}
        for cond in CONDITIONS:
            r = runs.get((ds, cond))
            if not r:
                continue
            meta = r["meta"]
            w(f"### {ds}, {cond}\n")
            w(f"Data: {describe_data(meta)}. Runs per tool: {meta.get('runs', '?')}"
              + (" after one warm-up run" if cond == "warm" else ", caches dropped before each")
              + (f"; {meta.get('date', '')}" if meta.get("date") else "") + ".\n")
            tools = r["tools"]
            d = tools.get("dedup")
            dm = d["median"] if ok(d) else None
            w("| tool | kind | median s | min s | max s | dedup / tool | peak RSS MiB | same groups |")
            w("|---|---|---:|---:|---:|---:|---:|---|")
            for name in r["order"]:
                t = tools[name]
                rr = rss.get(ds, {}).get(name)
                mem = f"{int(rr['max_rss_kib']) / 1024:.1f}" if rr and rr.get("max_rss_kib", "").isdigit() else "-"
                status = ""
                if t["bad_exits"]:
                    status = " (exit " + ",".join(map(str, t["bad_exits"])) + (": killed by timeout" if 137 in t["bad_exits"] else "") + ")"
                same = {True: "yes", False: "NO"}.get(gsame.get(name), "-")
                w(f"| {name}{status} | {kind.get(name, '?')} | {fmt_s(t['median'])} | {fmt_s(t['min'])} | "
                  f"{fmt_s(t['max'])} | {fmt_ratio(dm, t['median']) if ok(t) else '-'} | {mem} | {same} |")
            w("")
        if g:
            w(f"Groups on {ds} ({g['root']}), baseline `{g['baseline']}`: "
              + ("every tool found the same groups." if g["all_same"] else "**tools disagree**, see "
                 f"`{ds}-groups.md`.")
              + " " + ", ".join(f"{r['tool']} {r['groups']} groups/{r['inodes']} inodes/{r['paths']} names"
                              for r in g["tools"]) + ".\n")

    # ---- RSS ----
    if rss:
        w("### Peak RSS (MiB, one warm run per tool, `/usr/bin/time -f %M`)\n")
        names = []
        for ds in rss:
            for n in rss[ds]:
                if n not in names:
                    names.append(n)
        w("| dataset | " + " | ".join(names) + " | dedup / fclones |")
        w("|---|" + "---:|" * (len(names) + 1))
        for ds in sorted(rss, key=ds_key):
            row = rss[ds]

            def mib(n):
                v = row.get(n, {}).get("max_rss_kib", "")
                return int(v) / 1024 if v.isdigit() else None
            cells = [f"{mib(n):.1f}" if mib(n) is not None else "-" for n in names]
            ratio = fmt_ratio(mib("dedup"), mib("fclones"))
            if ds == RSS_TARGET[0] and ratio != "-":
                ratio += f" (target <= {RSS_TARGET[1]})"
            w(f"| {ds} | " + " | ".join(cells) + f" | {ratio} |")
        w("")

    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
