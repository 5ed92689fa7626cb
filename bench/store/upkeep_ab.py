#!/usr/bin/env python3
"""A/B of two dedup binaries on the upkeep benchmark's history (issue 25): the history of
bench/store/upkeep.py (SNAPSHOTS backups of a changing tree) is built once, by BEFORE, then the
two binaries take turns, ROUNDS times: `forget --keep-last 10 --prune` on a fresh copy of the
history, then `check --read-data` on the pruned copy. Prints each run's wall, user and system
seconds (/usr/bin/time) and the medians; the history's repository uses the default key
derivation unless --cheap-kdf (then the argon2 cost of opening hides nothing).

    bench/store/upkeep_ab.py BEFORE AFTER --base /dev/shm/upkeep-ab --rounds 5
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import PASSWORD  # noqa: E402
from upkeep import change, make_tree  # noqa: E402


def timed(argv, env):
    """Runs argv under /usr/bin/time; returns (wall, user, system) seconds."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %U %S"] + argv, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    err = r.stderr.decode(errors="replace")
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}):\n{err[-2000:]}")
    return tuple(float(x) for x in err.strip().splitlines()[-1].split())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--base", default="/dev/shm/upkeep-ab")
    ap.add_argument("--snapshots", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cheap-kdf", action="store_true", help="argon2 with 8 KiB and one pass")
    args = ap.parse_args()
    env = dict(os.environ, DEDUP_PASSWORD=PASSWORD)
    shutil.rmtree(args.base, ignore_errors=True)
    src, history, work = (os.path.join(args.base, d) for d in ("src", "history", "work"))
    rng = random.Random(1)
    make_tree(src, 2000, 100_000, rng)
    init = [args.before, "store", "init", "-q", "-r", history]
    if args.cheap_kdf:
        # Below the floor users get: allowed for tests and measurements only.
        env["DEDUP_TEST_ALLOW_WEAK_KDF"] = "1"
        init += ["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-lanes", "1"]
    subprocess.run(init, env=env, check=True)
    for n in range(args.snapshots):
        if n:
            change(src, 2000, 100_000, 0.05, rng)
        subprocess.run([args.before, "store", "backup", "-q", "-r", history, src], env=env, check=True)
    shutil.rmtree(src)
    results = {"before": {"prune": [], "check": []}, "after": {"prune": [], "check": []}}
    for rnd in range(args.rounds):
        order = ["before", "after"] if rnd % 2 == 0 else ["after", "before"]
        for which in order:
            binary = getattr(args, which)
            shutil.rmtree(work, ignore_errors=True)
            subprocess.run(["cp", "-a", history, work], check=True)
            prune = timed([binary, "store", "forget", "-q", "-r", work, "--keep-last", "10", "--prune"], env)
            check = timed([binary, "store", "check", "-q", "-r", work, "--read-data"], env)
            results[which]["prune"].append(prune)
            results[which]["check"].append(check)
            print(f"round {rnd + 1} {which:6} forget+prune {prune[0]:.2f} s ({prune[1]:.2f} u {prune[2]:.2f} s)"
                  f"  check --read-data {check[0]:.2f} s ({check[1]:.2f} u {check[2]:.2f} s)", flush=True)
    shutil.rmtree(args.base, ignore_errors=True)
    print("\nmedians: wall / user / system seconds")
    for which in ("before", "after"):
        line = []
        for step in ("prune", "check"):
            runs = results[which][step]
            med = [statistics.median(r[i] for r in runs) for i in range(3)]
            line.append(f"{step} {med[0]:.2f} / {med[1]:.2f} / {med[2]:.2f}")
        print(f"  {which:6} " + "   ".join(line))


if __name__ == "__main__":
    main()
