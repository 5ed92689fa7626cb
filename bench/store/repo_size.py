#!/usr/bin/env python3
"""Repository size after scenario A's three snapshots, over several repositories per tool
(issue 24: "repository size <= the smallest peer's").

A repository's size moves with its chunker key (each repository cuts at other places), by a few
tenths of a percent, which is as much as dedup and rustic differ by: one run of bench/store/run.py
cannot tell them apart. This script generates scenario A's source once (run.py's generator), and
for each of --runs repositories per tool backs up a fresh copy of it, backs it up again, applies
run.py's modification and backs it up a third time, then reports the repository's bytes, and per
tool the mean, median and range. Sizes only: the machine's load does not move them.

  bench/store/repo_size.py --scale 1.0 --runs 3 --tools dedup,rustic
"""

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("scenario", os.path.join(HERE, "run.py"))
scenario = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scenario)


def size(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def one(tool, dedup, pristine, work, repo, init_args=()):
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["cp", "-a", pristine, work], check=True)
    env = dict(os.environ, DEDUP_PASSWORD="x", RUSTIC_PASSWORD="x", RESTIC_PASSWORD="x")
    commands = {
        "dedup": ([dedup, "store", "init", "-q", "-r", repo, *init_args], [dedup, "store", "backup", "-q", "-r", repo, work]),
        "rustic": (["rustic", "-r", repo, "init"], ["rustic", "-r", repo, "backup", work]),
        "restic": (["restic", "-q", "-r", repo, "init"], ["restic", "-q", "-r", repo, "backup", work]),
    }[tool]
    quiet = dict(env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(commands[0], **quiet)
    subprocess.run(commands[1], **quiet)
    subprocess.run(commands[1], **quiet)
    scenario.modify(work, 1)
    subprocess.run(commands[1], **quiet)
    grown = size(repo)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(repo, ignore_errors=True)
    return grown


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tools", default="dedup,rustic")
    ap.add_argument("--src", default="/dev/shm/repo-size-src")
    ap.add_argument("--work", default="/dev/shm/repo-size-work")
    ap.add_argument("--repo", default="/work/tmp-repo-size")
    ap.add_argument("--init", default="", help="more arguments for `dedup store init`, e.g. \"--chunker fastcdc-normalised\"")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    args = ap.parse_args()
    scenario.generate(args.src, args.scale, 1)
    sizes = {tool: [] for tool in args.tools.split(",")}
    for i in range(args.runs):
        for tool in sizes:  # in turn, so that every tool sees the same source
            sizes[tool].append(one(tool, os.path.abspath(args.dedup), args.src, args.work, args.repo, args.init.split()))
            print(f"{tool} repository {i + 1}: {sizes[tool][-1]} B", flush=True)
    for tool, s in sizes.items():
        print(f"{tool}: mean {statistics.mean(s) / 2**20:.1f} MiB, median {statistics.median(s) / 2**20:.1f} MiB, "
              f"range {min(s) / 2**20:.1f}-{max(s) / 2**20:.1f} MiB", flush=True)


if __name__ == "__main__":
    main()
