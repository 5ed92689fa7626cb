#!/usr/bin/env python3
"""Upkeep benchmark of `dedup store` against restic, rustic and borg (issue 25): a long history
(SNAPSHOTS backups of a tree of which a share of the files changes before each), then
`forget --keep-last 10 --prune` (borg: `prune --keep-last 10` then `compact`) and
`check --read-data` (borg: `check --verify-data`), each timed under /usr/bin/time -v.

Every tool gets the same tree and the same changes (seeded); the tools take turns per round.

    bench/store/upkeep.py --base /dev/shm/upkeep --snapshots 30 --rounds 3
"""

import argparse
import json
import os
import random
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Tool, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEDUP = os.path.join(ROOT, "target", "x86_64-unknown-linux-gnu", "release", "dedup")


def make_tree(src, files, size, rng):
    os.makedirs(src, exist_ok=True)
    for i in range(files):
        d = os.path.join(src, f"d{i % 20:02}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:05}"), "wb") as f:
            f.write(rng.randbytes(rng.randint(size // 4, size * 2)))


def change(src, files, size, share, rng):
    for i in rng.sample(range(files), int(files * share)):
        path = os.path.join(src, f"d{i % 20:02}", f"f{i:05}")
        with open(path, "wb") as f:
            f.write(rng.randbytes(rng.randint(size // 4, size * 2)))


def forget_prune(tool):
    r, d = tool.repo, tool.dedup
    return {
        "dedup": [[d, "store", "forget", "-q", "-r", r, "--keep-last", "10", "--prune"]],
        "restic": [["restic", "-q", "-r", r, "forget", "--keep-last", "10", "--prune"]],
        "rustic": [["rustic", "-r", r, "forget", "--keep-last", "10", "--prune"]],
        "borg": [["borg", "prune", "--keep-last", "10", r], ["borg", "compact", r]],
    }[tool.name]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="/dev/shm/upkeep")
    ap.add_argument("--tools", default="dedup,restic,rustic,borg")
    ap.add_argument("--snapshots", type=int, default=30)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--size", type=int, default=100_000, help="mean file size in bytes")
    ap.add_argument("--share", type=float, default=0.05, help="share of files changed per snapshot")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dedup", default=DEDUP)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    tools = args.tools.split(",")
    results = {t: {"prune": [], "check": [], "prune_rss": [], "check_rss": [], "history": []} for t in tools}
    for rnd in range(args.rounds):
        order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
        for name in order:
            shutil.rmtree(args.base, ignore_errors=True)
            src = os.path.join(args.base, "src")
            rng = random.Random(1)
            make_tree(src, args.files, args.size, rng)
            tool = Tool(name, os.path.join(args.base, "repo"), args.dedup)
            os.makedirs(tool.conf, exist_ok=True)
            run(tool, tool.init(), timed=False)
            history = 0.0
            for n in range(args.snapshots):
                if n:
                    change(src, args.files, args.size, args.share, rng)
                seconds, _ = run(tool, tool.backup(src, f"s{n:04}"))
                history += seconds
            seconds = rss = 0
            for argv in forget_prune(tool):
                s, m = run(tool, argv)
                seconds, rss = seconds + s, max(rss, m)
            check_s, check_rss = run(tool, tool.check())
            res = results[name]
            res["history"].append(history)
            res["prune"].append(seconds)
            res["prune_rss"].append(rss)
            res["check"].append(check_s)
            res["check_rss"].append(check_rss)
            print(f"round {rnd + 1} {name:7} history {history:7.2f} s  forget+prune {seconds:6.2f} s "
                  f"({rss / 1024:.0f} MiB)  check --read-data {check_s:6.2f} s ({check_rss / 1024:.0f} MiB)",
                  flush=True)
    shutil.rmtree(args.base, ignore_errors=True)
    med = {t: {k: statistics.median(v) for k, v in r.items()} for t, r in results.items()}
    print("\nmedians (s):")
    for t in tools:
        print(f"  {t:7} forget+prune {med[t]['prune']:6.2f}  check --read-data {med[t]['check']:6.2f}  "
              f"({med[t]['history']:.1f} s for {args.snapshots} backups)")
    peers = [t for t in tools if t != "dedup"]
    if "dedup" in med and peers:
        for step in ("prune", "check"):
            best = min(peers, key=lambda t: med[t][step])
            print(f"  dedup / fastest peer ({best}) {step}: {med['dedup'][step] / med[best][step]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "medians": med}, f, indent=1)


if __name__ == "__main__":
    main()
