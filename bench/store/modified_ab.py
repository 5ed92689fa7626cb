#!/usr/bin/env python3
"""Two builds of dedup on scenario A's modified backup, cycle after cycle (issue 40's CPU check).

Each build backs the source up once into its own repository; then, per cycle, run.py's
modification is applied, each build backs the source up (the order alternating by cycle), and
the modification is undone. Every cycle re-reads the same files (the touched ones, the text
file with its insertion, the random file with its new MiB) and writes little new data, so the
backups of a build are alike and their CPU time can be compared pair by pair on a shared
machine, where the wall time swings with the load. Prints the medians of the wall, CPU and
user time of each build and of the pairs' ratios (new / base).

  bench/store/modified_ab.py --new NEW/dedup --base OLD/dedup --src /dev/shm/storebench/src \
      --work /tmp/modified-ab --cycles 10
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (scenario A's source, modification and password)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", required=True, help="the dedup binary under test")
    ap.add_argument("--base", required=True, help="the dedup binary to compare with")
    ap.add_argument("--src", required=True, help="scenario A's source (made by run.py's generator)")
    ap.add_argument("--work", required=True, help="a directory for the two repositories (removed first)")
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    builds = {"new": os.path.abspath(a.new), "base": os.path.abspath(a.base)}
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)

    def store(build, *args):
        """Runs `dedup store ARGS` with the build's own state and cache; (wall, cpu, user) s."""
        env = dict(os.environ, DEDUP_PASSWORD=run.PASSWORD,
                   XDG_STATE_HOME=os.path.join(a.work, "state-" + build),
                   XDG_CACHE_HOME=os.path.join(a.work, "cache-" + build))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([builds[build], "store", *args], env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user = after.ru_utime - before.ru_utime
        return wall, user + after.ru_stime - before.ru_stime, user

    repo = {b: os.path.join(a.work, "repo-" + b) for b in builds}
    for b in builds:
        store(b, "init", "-q", "-r", repo[b])
        store(b, "backup", "-q", "-r", repo[b], a.src)
    results = {b: [] for b in builds}
    for cycle in range(a.cycles):
        state = run.modify(a.src, a.seed)
        try:
            order = list(builds) if cycle % 2 == 0 else list(builds)[::-1]
            for b in order:
                results[b].append(store(b, "backup", "-q", "-r", repo[b], a.src))
        finally:
            run.undo(a.src, state)
        # The undone files' times settle before the next modification, as in run.py.
        time.sleep(1.2)
    print(f"modified backup, {a.cycles} cycles: medians (s) and new / base, median (min-max) of the pairs")
    for i, name in enumerate(("wall", "cpu", "user")):
        new = [r[i] for r in results["new"]]
        base = [r[i] for r in results["base"]]
        pairs = [x / y for x, y in zip(new, base) if y]
        print(f"  {name:<5} new {statistics.median(new):7.3f}  base {statistics.median(base):7.3f}  "
              f"new/base {statistics.median(pairs):.3f} ({min(pairs):.3f}-{max(pairs):.3f})")
    shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
