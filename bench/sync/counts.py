#!/usr/bin/env python3
"""Instructions and system calls of `dedup sync` runs, which hold on a loaded machine where times
do not: a no-op, and an incremental run whose racily-clean copies are compared by content.

For each binary, on a freshly generated seed tree (run.py's generator, seed 1): a first copy, a
pause, the no-op (once under `valgrind --tool=callgrind`, once under `strace -f`); then 5 % of
the files appended to and 5 % new, those files stamped 10 s ahead (so that a copy of them is
racily clean whatever the machine's speed: its change time is within the window of their
stamp), a sync, 10 % changed again (run.py's mutation), and the measured sync, which compares
the first change's copies byte for byte; the same again for strace.

  bench/sync/counts.py --base /dev/shm/counts --trees small,medium BIN_A BIN_B
"""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def instructions(argv):
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                       capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", r.stderr).group(1))


def calls(argv, scratch):
    out = os.path.join(scratch, "strace.out")
    subprocess.run(["strace", "-f", "-o", out, *argv], check=True)
    with open(out) as f:
        return sum(1 for line in f if "resumed>" not in line and "+++ exited" not in line)


def mutate(src, seed, future=False):
    """run.py's mutation; with `future`, the files it touched stamped 10 s ahead."""
    stamps = lambda: {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns
                      for d, _, fs in os.walk(src) for f in fs}
    before = stamps()
    run.mutate(src, random.Random(seed), seed)
    if future:
        t = time.time_ns() + 10_000_000_000
        for p, m in stamps().items():
            if before.get(p) != m:
                os.utime(p, ns=(t, t))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--trees", default="small,medium")
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    for tree in a.trees.split(","):
        files, largest, depth = run.TREES[tree]
        for binary in a.binaries:
            root = os.path.join(a.base, tree)
            shutil.rmtree(root, ignore_errors=True)
            src, dst = os.path.join(root, "src"), os.path.join(root, "dst")
            run.generate(src, files, largest, depth, random.Random(1))
            sync = [binary, "sync", "-q", src, dst]
            time.sleep(0.3)
            subprocess.run(sync, check=True)
            time.sleep(0.3)
            noop = (instructions(sync), calls(sync, root))
            incr = []
            for seed, measure in ((5, lambda: instructions(sync)), (7, lambda: calls(sync, root))):
                mutate(src, seed, future=True)
                subprocess.run(sync, check=True)
                mutate(src, seed + 1)
                incr.append(measure())
            print(f"{tree} {binary}: no-op {noop[0] / 1e6:.3f} M instructions, {noop[1]} calls; "
                  f"racily-clean incremental {incr[0] / 1e6:.3f} M instructions, {incr[1]} calls")
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
