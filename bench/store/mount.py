#!/usr/bin/env python3
"""Benchmark of `dedup store mount` against `restic mount` (issue 26).

Per tool, in a fresh repository on disk: one backup of a medium tree (copies of /usr/share and
/usr/include, --tree-mib of file content) and of a 1 GiB file of random bytes; then, per round,
mount in the background and wait for the mount to answer, and measure

  ls_cold   `ls -R` of the snapshot's copy of the tree, right after mounting (nothing listed yet;
            page cache dropped first, so the repository's tree data comes from disk)
  ls_warm   the same again on the same mount (what the file system and the kernel kept)
  cat_cold  `cat` of the 1 GiB file through the mount to /dev/null, page cache dropped first
            (echo 3 > /proc/sys/vm/drop_caches; needs root), so the packs come from disk

then unmount (fusermount3 -u) and wait for the program to end. Tools take turns within each
round. Prints medians and dedup's ratio to each peer, and writes every measurement as JSON.

  bench/store/mount.py --base /work/tmp-mount --rounds 3
  bench/store/mount.py --base /work/tmp-mount --tools dedup --tree-mib 50 --big-mib 64   # quick
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import copy_usr  # noqa: E402  (scenario A's copies of /usr/share and /usr/include)

PASSWORD = "bench-mount-password"
TOOLS = ["dedup", "restic"]
STEPS = ["ls_cold", "ls_warm", "cat_cold"]


def generate(src, tree_mib, big_mib):
    """The source: `tree/` and `big.bin`; kept between runs when its stamp matches."""
    stamp = src + ".stamp"
    want = f"tree={tree_mib} big={big_mib}\n"
    if os.path.isdir(src) and os.path.exists(stamp) and open(stamp).read() == want:
        return
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    copy_usr(os.path.join(src, "tree"), tree_mib << 20)
    rng = random.Random(26)
    with open(os.path.join(src, "big.bin"), "wb") as f:
        left = big_mib << 20
        while left > 0:
            n = min(left, 64 << 20)
            f.write(rng.randbytes(n))
            left -= n
    with open(stamp, "w") as f:
        f.write(want)


def env_for(tool, repo):
    env = dict(os.environ)
    if tool == "dedup":
        env.update(DEDUP_REPO=repo, DEDUP_PASSWORD=PASSWORD)
    else:
        env.update(RESTIC_REPOSITORY=repo, RESTIC_PASSWORD=PASSWORD)
    return env


def run(cmd, env):
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")


def prepare(tool, dedup, repo, src):
    """A fresh repository of `tool` holding one snapshot of `src`."""
    shutil.rmtree(repo, ignore_errors=True)
    env = env_for(tool, repo)
    if tool == "dedup":
        run([dedup, "store", "init"], env)
        run([dedup, "store", "backup", src], env)
    else:
        run(["restic", "init"], env)
        run(["restic", "backup", src], env)


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def mount(tool, dedup, repo, point):
    env = env_for(tool, repo)
    cmd = [dedup, "store", "mount", point] if tool == "dedup" else ["restic", "mount", point]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.monotonic()
    while not os.path.isdir(os.path.join(point, "snapshots")):
        if proc.poll() is not None:
            sys.exit(f"{tool} mount ended: {proc.stderr.read().decode()[-2000:]}")
        if time.monotonic() - start > 120:
            sys.exit(f"{tool} mount did not appear within 120 s")
        time.sleep(0.02)
    return proc, time.monotonic() - start


def unmount(proc, point):
    subprocess.run(["fusermount3", "-u", point], check=True)
    code = proc.wait(timeout=60)
    if code != 0:
        sys.exit(f"mount exited {code}: {proc.stderr.read().decode()[-2000:]}")


def snapshot_dir(point):
    """The one snapshot's directory (both tools name it by time)."""
    names = [n for n in os.listdir(os.path.join(point, "snapshots")) if n != "latest"]
    assert len(names) == 1, names
    return os.path.join(point, "snapshots", names[0])


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def measure(tool, dedup, repo, src, point):
    drop_caches()
    proc, mounted = mount(tool, dedup, repo, point)
    try:
        inside = snapshot_dir(point) + src
        out = {"mount_s": mounted}
        out["ls_cold"] = timed(["ls", "-R", os.path.join(inside, "tree")])
        out["ls_warm"] = timed(["ls", "-R", os.path.join(inside, "tree")])
        big = os.path.join(inside, "big.bin")
        drop_caches()
        out["cat_cold"] = timed(["cat", big])
        out["cat_bytes"] = os.path.getsize(big)
    finally:
        unmount(proc, point)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--base", default="/work/tmp-mount", help="scratch directory (on disk)")
    ap.add_argument("--dedup", default="target/release/dedup")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree-mib", type=int, default=400)
    ap.add_argument("--big-mib", type=int, default=1024)
    ap.add_argument("--json", help="write the measurements here")
    ap.add_argument("--keep", action="store_true", help="keep the scratch data")
    args = ap.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    for tool in tools:
        if tool != "dedup" and shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (bench/store/install-peers.sh)")
    dedup = os.path.abspath(args.dedup)
    src = os.path.join(args.base, "src")
    point = os.path.join(args.base, "mnt")
    os.makedirs(point, exist_ok=True)
    generate(src, args.tree_mib, args.big_mib)
    files = sum(len(f) for _, _, f in os.walk(os.path.join(src, "tree")))
    print(f"source: {files} files in tree/ ({args.tree_mib} MiB), big.bin {args.big_mib} MiB")
    repos = {t: os.path.join(args.base, f"repo-{t}") for t in tools}
    for tool in tools:
        prepare(tool, dedup, repos[tool], src)
    results = {t: [] for t in tools}
    for r in range(args.rounds):
        order = tools[r % len(tools):] + tools[: r % len(tools)]
        for tool in order:
            got = measure(tool, dedup, repos[tool], src, point)
            results[tool].append(got)
            print(f"round {r + 1} {tool}: " + ", ".join(f"{k} {v:.3f}" for k, v in got.items() if k != "cat_bytes"))
    print()
    print(f"{'tool':8} {'mount':>8} " + " ".join(f"{s:>9}" for s in STEPS) + f" {'cat MB/s':>9}")
    medians = {}
    for tool in tools:
        med = {k: statistics.median(m[k] for m in results[tool]) for k in ["mount_s"] + STEPS}
        medians[tool] = med
        rate = results[tool][0]["cat_bytes"] / med["cat_cold"] / 1e6
        print(f"{tool:8} {med['mount_s']:8.2f} " + " ".join(f"{med[s]:9.3f}" for s in STEPS) + f" {rate:9.0f}")
    if "dedup" in medians:
        for tool in tools:
            if tool == "dedup":
                continue
            ratios = ", ".join(f"{s} {medians['dedup'][s] / medians[tool][s]:.2f}x" for s in STEPS)
            print(f"dedup / {tool}: {ratios}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "medians": medians}, f, indent=1)
    if not args.keep:
        for repo in repos.values():
            shutil.rmtree(repo, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)
        os.remove(src + ".stamp")


if __name__ == "__main__":
    main()
