#!/usr/bin/env python3
"""Benchmark of `dedup sync` against cp -a/-au, rsync -a, rsync -aHSX and rclone sync.

The seed comparison's four trees (small, medium, big, big2), generated deterministically, each
synced by every tool into a destination of its own: a first copy into an empty destination, a
no-op run, and incremental rounds (5 % of the files appended to and 5 % new files before each
round; every tool sees the same change). Tools run in turn within each round, so a slow minute
of the shared machine lands on all of them. Prints medians in ms and dedup's ratio to each peer,
and writes a JSON file of every timing.

  bench/sync/run.py --base /dev/shm/syncbench            # in RAM (tmpfs)
  bench/sync/run.py --base /work/syncbench --trees big    # on disk
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

TREES = {
    # name: (files, largest file in bytes, depth)
    "small": (100, 10_000, 3),
    "medium": (1_000, 100_000, 6),
    "big": (10_000, 100_000, 12),
    "big2": (1_000, 1_000_000, 12),
}


def tools(dedup):
    """name -> (first-copy argv, later argv) as functions of (src, dst)."""
    return {
        "dedup": (lambda s, d: [dedup, "sync", "-q", s, d],) * 2,
        "cp": (lambda s, d: ["cp", "-a", s + "/.", d], lambda s, d: ["cp", "-au", s + "/.", d]),
        "rsync": (lambda s, d: ["rsync", "-a", s + "/", d + "/"],) * 2,
        "rsync-HSX": (lambda s, d: ["rsync", "-aHSX", s + "/", d + "/"],) * 2,
        "rclone": (lambda s, d: ["rclone", "sync", "-q", s, d],) * 2,
    }


def generate(root, files, largest, depth, rng):
    """`files` files of random sizes up to `largest`, spread over a tree `depth` levels deep."""
    dirs = [root]
    for level in range(depth):
        parent = dirs[-1] if level else root
        for i in range(3):
            d = os.path.join(parent, f"d{level}_{i}")
            os.makedirs(d, exist_ok=True)
            dirs.append(d)
    for i in range(files):
        d = rng.choice(dirs)
        write_random(os.path.join(d, f"f{i:06d}.bin"), rng.randint(1, largest), rng)
    return dirs


def write_random(path, size, rng, mode="wb"):
    with open(path, mode) as f:
        f.write(rng.randbytes(size))


def mutate(root, rng, round_no):
    """Append to 5 % of the files and add 5 % new files."""
    all_files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    dirs = sorted({os.path.dirname(p) for p in all_files})
    n = max(1, len(all_files) // 20)
    for p in rng.sample(all_files, n):
        write_random(p, rng.randint(1, 4096), rng, "ab")
    for i in range(n):
        write_random(os.path.join(rng.choice(dirs), f"new{round_no}_{i}.bin"), rng.randint(1, 10_000), rng)


def timed(argv):
    start = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return elapsed


def check_same(src, dst):
    """The destination holds what the source holds (diff -r), so no tool is timed doing less."""
    r = subprocess.run(["diff", "-r", "-q", src, dst], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"{dst} differs from {src}:\n{r.stdout.decode(errors='replace')[:2000]}")


def bench_tree(name, base, names, dedup, rounds, incr_rounds, seed):
    files, largest, depth = TREES[name]
    rng = random.Random(seed)
    src = os.path.join(base, name, "src")
    shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    generate(src, files, largest, depth, rng)
    table = tools(dedup)
    times = {t: {"first": [], "noop": [], "incremental": []} for t in names}
    dst = lambda t: os.path.join(base, name, "dst-" + t)
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for t in order:
            shutil.rmtree(dst(t), ignore_errors=True)
            os.makedirs(dst(t))
            subprocess.run(["sync"])
            times[t]["first"].append(timed(table[t][0](src, dst(t))))
        for t in order:
            times[t]["noop"].append(timed(table[t][1](src, dst(t))))
    for t in names:
        check_same(src, dst(t))
    for r in range(incr_rounds):
        mutate(src, rng, r)
        order = names[r % len(names):] + names[: r % len(names)]
        for t in order:
            times[t]["incremental"].append(timed(table[t][1](src, dst(t))))
    for t in names:
        check_same(src, dst(t))
    shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="directory for the trees (tmpfs for 'in RAM')")
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--tools", default="dedup,cp,rsync,rsync-HSX,rclone")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--incremental-rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench/results/sync.json")
    a = ap.parse_args()
    names = [t for t in a.tools.split(",") if t]
    results = {}
    for tree in a.trees.split(","):
        results[tree] = bench_tree(tree, a.base, names, os.path.abspath(a.dedup), a.rounds, a.incremental_rounds, a.seed)
        print(f"\n{tree} (medians, ms)   first    no-op  incremental")
        med = {t: {k: statistics.median(v) for k, v in results[tree][t].items()} for t in names}
        for t in names:
            m = med[t]
            print(f"  {t:<12} {m['first']:9.1f} {m['noop']:8.1f} {m['incremental']:12.1f}")
        if "dedup" in names:
            for t in names:
                if t == "dedup":
                    continue
                ratio = [med["dedup"][k] / med[t][k] for k in ("first", "noop", "incremental")]
                print(f"  dedup/{t:<8} {ratio[0]:8.2f} {ratio[1]:8.2f} {ratio[2]:12.2f}")
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"base": a.base, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
