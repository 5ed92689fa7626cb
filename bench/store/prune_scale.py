#!/usr/bin/env python3
"""Prune's cost per blob from 10 k to 10 M blobs (issue 25): synthetic repositories written by
the `synthetic_repo` example (70 % of the blobs in snapshot `keep`, 30 % in `drop`), then
`dedup store prune` with nothing to free, and `forget drop` + `prune` with 30 % to free, each
under /usr/bin/time. Prints a table and writes JSON.

    cargo build --release --example synthetic_repo
    python3 bench/store/prune_scale.py --base /dev/shm/prune-scale --sizes 10000,100000,1000000
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RELEASE = os.path.join(ROOT, "target", "x86_64-unknown-linux-gnu", "release")


def timed(cmd):
    """Wall seconds and peak RSS (KiB) of one run; exits on failure."""
    start = time.monotonic()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    rss = int(out.stderr.strip().splitlines()[-1])
    return wall, rss, out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="/dev/shm/prune-scale")
    ap.add_argument("--sizes", default="10000,100000,1000000,10000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dedup", default=os.path.join(RELEASE, "dedup"))
    ap.add_argument("--generator", default=os.path.join(RELEASE, "examples", "synthetic_repo"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    os.makedirs(args.base, exist_ok=True)
    rows = []
    for blobs in [int(s) for s in args.sizes.split(",")]:
        repo = os.path.join(args.base, f"r{blobs}")
        shutil.rmtree(repo, ignore_errors=True)
        start = time.monotonic()
        made = subprocess.run([args.generator, repo, str(blobs)], capture_output=True, text=True, check=True)
        built = time.monotonic() - start
        drop = re.search(r"^drop (\w+)", made.stdout, re.M).group(1)
        nothing, freeing = [], []
        for _ in range(args.rounds):
            nothing.append(timed([args.dedup, "store", "prune", "-q", "-r", repo]))
        for _ in range(args.rounds):
            copy = repo + "-copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(repo, copy)
            subprocess.run([args.dedup, "store", "forget", "-q", "-r", copy, drop[:8]], check=True)
            freeing.append(timed([args.dedup, "store", "prune", "-q", "-r", copy]))
            shutil.rmtree(copy)
        row = {
            "blobs": blobs,
            "build_s": round(built, 2),
            "nothing_s": statistics.median(w for w, _, _ in nothing),
            "nothing_rss_kib": statistics.median(r for _, r, _ in nothing),
            "thirty_s": statistics.median(w for w, _, _ in freeing),
            "thirty_rss_kib": statistics.median(r for _, r, _ in freeing),
        }
        for key in ("nothing", "thirty"):
            row[f"{key}_us_per_blob"] = round(row[f"{key}_s"] / blobs * 1e6, 3)
            row[f"{key}_bytes_per_blob"] = round(row[f"{key}_rss_kib"] * 1024 / blobs, 1)
        rows.append(row)
        print(
            f"{blobs:>10,} blobs: nothing to free {row['nothing_s']:.3f} s "
            f"({row['nothing_us_per_blob']} us/blob, {row['nothing_rss_kib'] / 1024:.1f} MiB), "
            f"30 % to free {row['thirty_s']:.3f} s ({row['thirty_us_per_blob']} us/blob, "
            f"{row['thirty_rss_kib'] / 1024:.1f} MiB)",
            flush=True,
        )
        shutil.rmtree(repo)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
