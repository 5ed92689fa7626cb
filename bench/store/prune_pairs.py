#!/usr/bin/env python3
"""Forget + prune on the upkeep history (issue 25), several dedup binaries and rustic taking
turns: the history of bench/store/upkeep.py (SNAPSHOTS backups of a 2,000-file tree, 5 % of the
files rewritten before each) is built once per tool, by the first binary and by rustic; then
each round runs `forget --keep-last 10 --prune` on a fresh copy for every entry, the order
rotating per round. Prints the medians of wall, user and system seconds (wait4) and minor
faults, and each run's wall time.

On a machine that others load, wall times mean little: `--rt` runs the timed command alone under
SCHED_FIFO (`chrt -f 1`, root), which takes both cores from ordinary tasks for the fraction of a
second it runs (the kernel's real-time throttling still leaves them 5 %), so that wall times
read about as on a quiet machine; the copies are not timed and run as usual.

    bench/store/prune_pairs.py --base /dev/shm/prune-pairs --rounds 11 --rt --rustic \\
        before=/path/to/dedup-before after=target/x86_64-unknown-linux-gnu/release/dedup
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import PASSWORD  # noqa: E402
from upkeep import change, make_tree  # noqa: E402


def build(base, snapshots, dedup, with_rustic):
    """The dedup history (and rustic's, with its cache) under base."""
    env = dict(os.environ, DEDUP_PASSWORD=PASSWORD, RUSTIC_PASSWORD=PASSWORD,
               XDG_CACHE_HOME=os.path.join(base, "rustic.conf", "cache"))
    src = os.path.join(base, "src")
    tools = [("dedup", [dedup, "store", "init", "-q", "-r", os.path.join(base, "dedup")],
              [dedup, "store", "backup", "-q", "-r", os.path.join(base, "dedup"), src])]
    if with_rustic:
        tools.append(("rustic", ["rustic", "-r", os.path.join(base, "rustic"), "init"],
                      ["rustic", "-r", os.path.join(base, "rustic"), "backup", src]))
    for _, init, _ in tools:
        subprocess.run(init, env=env, check=True, capture_output=True)
    rng = random.Random(1)
    make_tree(src, 2000, 100_000, rng)
    for n in range(snapshots):
        if n:
            change(src, 2000, 100_000, 0.05, rng)
        for _, _, backup in tools:
            subprocess.run(backup, env=env, check=True, capture_output=True)
    shutil.rmtree(src)


def timed(argv, env, rt):
    """Runs argv; returns (wall, user, system, minor faults)."""
    pre = ["chrt", "-f", "1"] if rt else []
    start = time.perf_counter()
    child = subprocess.Popen(pre + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode(errors="replace")
    if status != 0:
        sys.exit(f"{' '.join(argv)} failed ({status}):\n{err[-2000:]}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_minflt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="NAME=PATH of a dedup binary")
    ap.add_argument("--base", default="/dev/shm/prune-pairs")
    ap.add_argument("--snapshots", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--rt", action="store_true", help="time under SCHED_FIFO (chrt -f 1)")
    ap.add_argument("--rustic", action="store_true", help="rustic takes a turn too")
    args = ap.parse_args()
    entries = [tuple(b.split("=", 1)) for b in args.binaries]
    if args.rustic:
        entries.append(("rustic", "rustic"))
    shutil.rmtree(args.base, ignore_errors=True)
    os.makedirs(args.base)
    build(args.base, args.snapshots, entries[0][1], args.rustic)
    work = os.path.join(args.base, "work")
    results = {name: [] for name, _ in entries}
    for rnd in range(args.rounds):
        turn = rnd % len(entries)
        for name, binary in entries[turn:] + entries[:turn]:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(work + ".conf", ignore_errors=True)
            env = dict(os.environ, DEDUP_PASSWORD=PASSWORD, RUSTIC_PASSWORD=PASSWORD,
                       XDG_CACHE_HOME=os.path.join(work + ".conf", "cache"))
            if name == "rustic":
                subprocess.run(["cp", "-a", os.path.join(args.base, "rustic"), work], check=True)
                subprocess.run(["cp", "-a", os.path.join(args.base, "rustic.conf"), work + ".conf"],
                               check=True)
                argv = ["rustic", "-r", work, "forget", "--keep-last", "10", "--prune"]
            else:
                subprocess.run(["cp", "-a", os.path.join(args.base, "dedup"), work], check=True)
                argv = [binary, "store", "forget", "-q", "-r", work, "--keep-last", "10", "--prune"]
            results[name].append(timed(argv, env, args.rt))
    print("medians: wall / user / system seconds, minor faults; then each run's wall")
    for name, _ in entries:
        runs = results[name]
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        walls = " ".join(f"{r[0]:.3f}" for r in runs)
        print(f"  {name:10} {med[0]:.3f} / {med[1]:.3f} / {med[2]:.3f}  {med[3]:7.0f}   {walls}")
    shutil.rmtree(args.base, ignore_errors=True)


if __name__ == "__main__":
    main()
