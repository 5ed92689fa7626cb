#!/usr/bin/env python3
"""A/B of small-file copies into the writable volume (issue 38): for each pair, each binary in
turn (OLD, NEW, OLD, NEW, ...), a fresh volume on WORK, `cp -a SRC` into it and again into a
second directory, then a commit (an fsync); prints each copy's wall, the mount's peak RSS and the
load average at each run, and per binary the medians and NEW/OLD ratios. The two builds alternate
so that a loaded machine's drift falls on both alike. Root (mounts).
usage: bench/fs/copy_ab.py OLD NEW [--pairs 3] [--src /usr/share] [--work /var/tmp/dedup-copy-ab]"""
import argparse
import os
import shutil
import statistics
import subprocess
import time

parser = argparse.ArgumentParser()
parser.add_argument("old")
parser.add_argument("new")
parser.add_argument("--pairs", type=int, default=3)
parser.add_argument("--src", default="/usr/share")
parser.add_argument("--work", default="/var/tmp/dedup-copy-ab")
args = parser.parse_args()
env = dict(os.environ, DEDUP_PASSWORD="bench")


def run_once(binary):
    work = args.work
    mnt, repo = f"{work}/mnt", f"{work}/repo"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(mnt)
    subprocess.run([binary, "store", "init", "-r", repo], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    mount = subprocess.Popen([binary, "store", "-r", repo, "mount", "--writable", "bench", mnt],
                             env=env, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if os.path.ismount(mnt):
            break
        time.sleep(0.05)
    load = os.getloadavg()[0]
    walls = []
    for n in (1, 2):
        start = time.monotonic()
        subprocess.run(["cp", "-a", args.src, f"{mnt}/copy{n}"], stderr=subprocess.DEVNULL)
        walls.append(time.monotonic() - start)
    fd = os.open(f"{mnt}/.commit", os.O_WRONLY | os.O_CREAT, 0o644)
    os.fsync(fd)
    os.close(fd)
    with open(f"/proc/{mount.pid}/status") as status:
        hwm = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
    subprocess.run(["fusermount3", "-u", mnt], check=True)
    mount.wait()
    shutil.rmtree(work, ignore_errors=True)
    return walls[0], walls[1], hwm, load


results = {args.old: [], args.new: []}
for pair in range(args.pairs):
    for binary in (args.old, args.new):
        first, second, hwm, load = run_once(binary)
        results[binary].append((first, second, hwm))
        print(f"pair {pair + 1} {binary}: copy1 {first:.2f} s, copy2 {second:.2f} s, "
              f"peak RSS {hwm:.0f} MiB, load {load:.1f}", flush=True)
medians = {}
for binary, runs in results.items():
    medians[binary] = [statistics.median(r[i] for r in runs) for i in range(3)]
    first, second, hwm = medians[binary]
    print(f"{binary}: median copy1 {first:.2f} s, copy2 {second:.2f} s, peak RSS {hwm:.0f} MiB")
old, new = medians[args.old], medians[args.new]
print(f"NEW/OLD: copy1 {new[0] / old[0]:.2f}x, copy2 {new[1] / old[1]:.2f}x")
