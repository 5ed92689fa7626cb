#!/usr/bin/env python3
"""What scenario A's modification step adds to a repository, against the bytes it truly changes
(issue 24: "dedup across the modification step within 1.5x of the truly new bytes").

For each of --runs fresh repositories (each with its own chunker key, so cut points differ):
generate scenario A's source at --scale (bench/store/run.py's generator; the modification is the
same size at every scale), back it up twice, apply run.py's modification (100 bytes inserted at
the start of the text file, 1 MiB of the random file overwritten, 200 new 4 KiB files, 1,000
files touched), back it up again, and report how much the repository grew (every file: packs,
index, snapshot), for dedup its data and tree blobs apart, and the ratio to the truly new bytes
(100 + 1 MiB + 800 KiB). restic runs the same steps for comparison.

  bench/store/modified_added.py --scale 0.1 --runs 5 --tools dedup,restic
"""

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("scenario", os.path.join(HERE, "run.py"))
scenario = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scenario)

TRULY_NEW = 100 + (1 << 20) + 200 * 4096


def size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def one(tool, dedup, base, scale, seed, init_args=()):
    src, repo = os.path.join(base, "src"), os.path.join(base, "repo")
    shutil.rmtree(base, ignore_errors=True)
    scenario.generate(src, scale, seed)
    env = dict(os.environ, DEDUP_PASSWORD="x", RESTIC_PASSWORD="x", RESTIC_REPOSITORY=repo)

    def run(*argv):
        out = subprocess.run(argv, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return out.stdout

    store = (lambda *a: run(dedup, "store", *a, "-r", repo)) if tool == "dedup" else (lambda *a: run("restic", *a))
    store("init", *(init_args if tool == "dedup" else ()))
    store("backup", src)
    store("backup", src)
    before = size(repo)
    stats = json.loads(store("stats", "--json")) if tool == "dedup" else None
    scenario.modify(src, seed)
    store("backup", src)
    grew = size(repo) - before
    detail = ""
    if stats:
        after = json.loads(store("stats", "--json"))
        data = after["stored_data_bytes"] - stats["stored_data_bytes"]
        detail = f" (data blobs {data}, trees and the rest {grew - data})"
    shutil.rmtree(base, ignore_errors=True)
    return grew, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tools", default="dedup,restic")
    ap.add_argument("--base", default="/dev/shm/modified-added")
    ap.add_argument("--init", default="", help="more arguments for `dedup store init`, e.g. \"--chunker fastcdc:256K/1M/8M\"")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    args = ap.parse_args()
    for tool in args.tools.split(","):
        ratios = []
        for i in range(args.runs):
            grew, detail = one(tool, os.path.abspath(args.dedup), args.base, args.scale, 1, args.init.split())
            ratios.append(grew / TRULY_NEW)
            print(f"{tool} run {i + 1}: repository grew {grew} B{detail}: {grew / TRULY_NEW:.2f}x the truly new {TRULY_NEW} B", flush=True)
        print(f"{tool}: median {statistics.median(ratios):.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f})", flush=True)


if __name__ == "__main__":
    main()
