#!/usr/bin/env python3
"""Run several commands in turn, round after round, and report each one's median wall and CPU time.

hyperfine runs all of one command's runs before the next command's, so a disk or a neighbour
that slows down for a minute lands on one command only. Comparing two builds of dedup on this
machine's noisy disk needs their runs interleaved: A, B, A, B, ... This script does that, warm or
cold (page cache dropped before every run, as bench/drop-caches.sh does). The CPU time (user +
system of the command and the children it waited for) holds where the wall time swings with the
load of a shared machine.

    bench/interleave.py --cold --runs 11 \\
        "/tmp/dedup-old find DIR" "/tmp/dedup-new find DIR" "jdupes -r -q DIR"

Output and errors of the commands go to /dev/null; a command that fails is reported and counts
as a failed run, not a time.
"""

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument("--cold", action="store_true", help="drop the page cache before each run")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first (warm only)")
    parser.add_argument("commands", nargs="+", help="commands, each one shell-quoted argument")
    args = parser.parse_args()

    commands = [shlex.split(c) for c in args.commands]
    times: list[list[float]] = [[] for _ in commands]
    cpu: list[list[float]] = [[] for _ in commands]
    failures = [0] * len(commands)
    warmup = 0 if args.cold else args.warmup
    for round_number in range(warmup + args.runs):
        for i, argv in enumerate(commands):
            if args.cold:
                subprocess.run(["sh", os.path.join(HERE, "drop-caches.sh")], check=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            status = subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            ).returncode
            took = (time.perf_counter() - start) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
            if round_number < warmup:
                continue
            if status == 0:
                times[i].append(took)
                cpu[i].append(used)
            else:
                failures[i] += 1

    for text, runs, used, failed in zip(args.commands, times, cpu, failures):
        if runs:
            print(
                f"{statistics.median(runs):9.1f} ms  min {min(runs):8.1f}  max {max(runs):8.1f}"
                f"  CPU {statistics.median(used):9.1f} ms"
                f"  ({len(runs)} runs{f', {failed} failed' if failed else ''})  {text}"
            )
        else:
            print(f"{'':>9}    every run failed ({failed})  {text}")
    return 1 if any(failures) else 0


if __name__ == "__main__":
    sys.exit(main())
