#!/usr/bin/env python3
"""Scenario B of issue 24: a real source tree (the linux source, 78 k files), backed up, then 5 %
of its files changed (a line appended to half of them, the other half rewritten with a block
inserted at the start) and backed up again: the incremental case. dedup against restic, rustic,
kopia and borg, each with default settings and encryption on, under /usr/bin/time -v.

Every tool backs up its own fresh copy (`cp -a`) of the pristine tree in RAM, so each sees the
same files, times and edits (seeded); the repositories live on disk (--repos). Tools take turns
per round, the order rotating. Prints medians, dedup's ratio to each peer, the repository's
growth in the incremental backup against the bytes the edits touched, and peak RSS.

    bench/store/scenario_b.py --linux-src /dev/shm/linux-source-6.1 --rounds 3
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Tool, du, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEDUP = os.path.join(ROOT, "target", "x86_64-unknown-linux-gnu", "release", "dedup")
STEPS = ["first", "incremental"]


def regular_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return out


def edit(src, share, seed):
    """Changes `share` of the regular files under `src`; returns the bytes the edits touched."""
    rng = random.Random(seed)
    files = regular_files(src)
    touched = 0
    for i, p in enumerate(rng.sample(files, max(1, int(len(files) * share)))):
        if i % 2 == 0:
            line = f"/* edited {seed} {i} */\n".encode()
            with open(p, "ab") as f:
                f.write(line)
            touched += len(line)
        else:
            block = rng.randbytes(100)
            with open(p, "rb") as f:
                data = f.read()
            with open(p, "wb") as f:
                f.write(block + data)
            touched += len(block) + len(data)
    return touched


def one_pass(tool, pristine, work, seed, share):
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["cp", "-a", pristine, work], check=True)
    for p in (tool.repo, tool.conf):
        shutil.rmtree(p, ignore_errors=True)
    os.makedirs(tool.conf)
    if tool.name == "kopia":
        os.makedirs(tool.repo)
    time.sleep(1.2)  # timestamps settle, so the incremental pass may trust them
    run(tool, tool.init())
    out = {"first": run(tool, tool.backup(work, "first"))}
    before = du(tool.repo)
    touched = edit(work, share, seed)
    out["incremental"] = run(tool, tool.backup(work, "incremental"))
    growth = du(tool.repo) - before
    for p in (tool.repo, tool.conf, work):
        shutil.rmtree(p, ignore_errors=True)
    return out, growth, touched


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linux-src", required=True, help="the pristine tree (in RAM)")
    ap.add_argument("--work", default="/dev/shm/scenario-b/work", help="each tool's copy (in RAM)")
    ap.add_argument("--repos", default="/work/scenario-b", help="repositories (on disk)")
    ap.add_argument("--tools", default="dedup,restic,rustic,kopia,borg")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", DEDUP))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--share", type=float, default=0.05, help="fraction of files edited")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="bench/results/store/scenario-b.json")
    args = ap.parse_args()

    names = args.tools.split(",")
    os.makedirs(args.repos, exist_ok=True)
    times = {n: {s: [] for s in STEPS} for n in names}
    rss = {n: 0 for n in names}
    growth = {n: [] for n in names}
    touched = 0
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            tool = Tool(name, os.path.join(args.repos, name), os.path.abspath(args.dedup))
            out, grew, touched = one_pass(tool, args.linux_src, args.work, args.seed + r, args.share)
            for s in STEPS:
                times[name][s].append(out[s][0])
                rss[name] = max(rss[name], out[s][1])
            growth[name].append(grew)
            print(f"round {r + 1} {name}: first {out['first'][0]:.2f} s, incremental "
                  f"{out['incremental'][0]:.2f} s, +{grew / 1e6:.1f} MB", flush=True)

    med = {n: {s: statistics.median(times[n][s]) for s in STEPS} for n in names}
    print(f"\nmedians of {args.rounds} rounds (s); edits touched {touched / 1e6:.1f} MB")
    print(f"{'tool':8} {'first':>8} {'incr.':>8} {'growth MB':>10} {'peak RSS MiB':>13}")
    for n in names:
        print(f"{n:8} {med[n]['first']:8.2f} {med[n]['incremental']:8.2f} "
              f"{statistics.median(growth[n]) / 1e6:10.1f} {rss[n] / 1024:13.0f}")
    if "dedup" in names:
        for n in names:
            if n != "dedup":
                ratios = " ".join(f"{s} {med['dedup'][s] / med[n][s]:.2f}" for s in STEPS)
                print(f"dedup / {n}: {ratios}")
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"times": times, "peak_rss_kib": rss, "growth": growth,
                   "touched": touched, "args": vars(args)}, f, indent=1)


if __name__ == "__main__":
    main()
