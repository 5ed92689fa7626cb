#!/usr/bin/env python3
"""Benchmark of `dedup sync` against cp -a/-au, rsync -a, rsync -aHSX, rclone sync, and the
parallel copiers fcp and xcp (issue 41's anchors; first copies only: neither has an update mode).

The seed comparison's four trees (small, medium, big, big2), generated deterministically, each
synced by every tool into a destination of its own: a first copy into an empty destination, a
no-op run, and incremental rounds (5 % of the files appended to and 5 % new files before each
round; every tool sees the same change, 0.2 s old by then, unless --back-to-back). Tools run
in turn within each round, so a slow minute of the shared machine lands on all of them. Prints
medians in ms and dedup's ratio to each peer, wall time and (`*_cpu`) the run's CPU time, and
writes a JSON file of every timing.

  bench/sync/run.py --base /dev/shm/syncbench            # in RAM (tmpfs)
  bench/sync/run.py --base /work/syncbench --trees big    # on disk
  bench/sync/run.py --base /var/tmp/syncbench --dst-base /dev/shm/syncdst --trees usr   # ext4 to tmpfs

An old build against a new one, in turn in every round (ratios dedup/dedup-base):
  bench/sync/run.py --base /dev/shm/syncbench --tools dedup,dedup-base --dedup NEW --against OLD

Four more rows, each named like a tree in --trees:
  linux    a real source tree (--linux-src DIR: e.g. the linux-source-6.1 tarball from Debian,
           `apt-get download linux-source-6.1`, extracted): first copy and no-op
  usr      a copy of /usr/share (--usr-src DIR for another tree), made in --base: first copy and
           no-op
  sparse   one 1 GiB sparse file (64 data extents of 64 KiB): first copy and no-op
  renamed  a 1 GiB directory (256 files of 4 MiB) mirrored, then renamed in the source; the
           timed run is the sync after the rename, with deletions (dedup --delete, rsync
           --delete, rclone sync; cp -au has no deletion and just copies it again)
  bench/sync/run.py --base /dev/shm/syncbench --trees linux,sparse,renamed --linux-src /dev/shm/linux-6.1

The anchors beside dedup and cp (`cargo install --locked fcp xcp`):
  bench/sync/run.py --base /dev/shm/syncbench --trees small,medium,big,big2,usr --tools dedup,cp,fcp,xcp
"""

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

TREES = {
    # name: (files, largest file in bytes, depth)
    "small": (100, 10_000, 3),
    "medium": (1_000, 100_000, 6),
    "big": (10_000, 100_000, 12),
    "big2": (1_000, 1_000_000, 12),
}


AGAINST = None  # --against: another dedup binary, timed as the tool "dedup-base"
DST_BASE = None  # --dst-base: where the destinations go, when not beside the sources


def tools(dedup):
    """name -> (first-copy argv, later argv) as functions of (src, dst)."""
    return {
        "dedup": (lambda s, d: [dedup, "sync", "-q", s, d],) * 2,
        "dedup-base": (lambda s, d: [AGAINST, "sync", "-q", s, d],) * 2,
        "cp": (lambda s, d: ["cp", "-a", s + "/.", d], lambda s, d: ["cp", "-au", s + "/.", d]),
        "rsync": (lambda s, d: ["rsync", "-a", s + "/", d + "/"],) * 2,
        "rsync-HSX": (lambda s, d: ["rsync", "-aHSX", s + "/", d + "/"],) * 2,
        "rclone": (lambda s, d: ["rclone", "sync", "-q", s, d],) * 2,
        # Both copy SRC to a DST that does not exist yet (into it, as cp does, when it exists),
        # with their default settings: fcp keeps modes only, xcp modes and times.
        "fcp": (lambda s, d: ["fcp", s, d], None),
        "xcp": (lambda s, d: ["xcp", "-r", s, d], None),
    }


# Tools that copy into a destination they create, and only make first copies.
COPY_ONLY = ("fcp", "xcp")

SPECIAL = ("linux", "usr", "sparse", "renamed")


def fresh_dst(tool, path):
    """An empty destination for a first copy: none at all for the tools that create it."""
    shutil.rmtree(path, ignore_errors=True)
    if tool not in COPY_ONLY:
        os.makedirs(path)


def deleting(dedup):
    """The same tools asked to delete what the source no longer has (for the renamed row)."""
    t = tools(dedup)
    t["dedup"] = (lambda s, d: [dedup, "sync", "-q", "--delete", s, d],) * 2
    t["dedup-base"] = (lambda s, d: [AGAINST, "sync", "-q", "--delete", s, d],) * 2
    t["rsync"] = (lambda s, d: ["rsync", "-a", "--delete", s + "/", d + "/"],) * 2
    t["rsync-HSX"] = (lambda s, d: ["rsync", "-aHSX", "--delete", s + "/", d + "/"],) * 2
    return t


def make_sparse(path, size=1 << 30, extents=64, extent=64 << 10, seed=1):
    rng = random.Random(seed)
    with open(path, "wb") as f:
        f.truncate(size)
        for i in range(extents):
            f.seek(i * (size // extents) + rng.randrange(0, size // extents - extent, 4096))
            f.write(rng.randbytes(extent))


def bench_special(name, base, names, dedup, rounds, linux_src, usr_src="/usr/share"):
    """first/no-op of a real source tree or a sparse file; the sync after a directory rename."""
    if name == "renamed":
        names = [t for t in names if t not in COPY_ONLY]
    root = os.path.join(base, name)
    shutil.rmtree(root, ignore_errors=True)
    src = os.path.join(root, "src")
    os.makedirs(src)
    if name == "linux":
        if not linux_src:
            sys.exit("the linux row needs --linux-src DIR")
        subprocess.run(["cp", "-a", linux_src + "/.", src], check=True)
    elif name == "usr":
        subprocess.run(["cp", "-a", usr_src + "/.", src], check=True)
    elif name == "sparse":
        make_sparse(os.path.join(src, "sparse.img"))
    else:
        big = os.path.join(src, "photos", "2024")
        os.makedirs(big)
        rng = random.Random(2)
        for i in range(256):
            write_random(os.path.join(big, f"img{i:04d}.raw"), 4 << 20, rng)
        write_random(os.path.join(src, "readme.txt"), 1000, rng)
    settle()
    table = deleting(dedup) if name == "renamed" else tools(dedup)
    steps = ("renamed",) if name == "renamed" else ("first", "noop")
    times = {t: {k: [] for k in steps + tuple(s + "_cpu" for s in steps)} for t in names}
    dst_root = os.path.join(DST_BASE, name) if DST_BASE else root
    os.makedirs(dst_root, exist_ok=True)
    dst = lambda t: os.path.join(dst_root, "dst-" + t)
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        if name == "renamed":
            old, new = os.path.join(src, "photos", "2024"), os.path.join(src, "photos", "2024-renamed")
            if os.path.exists(new):
                os.rename(new, old)
            for t in order:
                shutil.rmtree(dst(t), ignore_errors=True)
                os.makedirs(dst(t))
                subprocess.run(table[t][0](src, dst(t)), check=True, stdout=subprocess.DEVNULL)
            os.rename(old, new)
            subprocess.run(["sync"])
            for t in order:
                times[t]["renamed"].append(timed(table[t][1](src, dst(t)), times[t]["renamed_cpu"]))
            continue
        for t in order:
            fresh_dst(t, dst(t))
            subprocess.run(["sync"])
            times[t]["first"].append(timed(table[t][0](src, dst(t)), times[t]["first_cpu"]))
        for t in order:
            if table[t][1]:
                times[t]["noop"].append(timed(table[t][1](src, dst(t)), times[t]["noop_cpu"]))
    for t in names:
        # cp -au cannot delete the old name; rclone skips symlinks (the real trees have some).
        if not (name == "renamed" and t == "cp") and not (name in ("linux", "usr") and t == "rclone"):
            check_same(src, dst(t))
    if name == "sparse":
        for t in names:
            st = os.stat(os.path.join(dst(t), "sparse.img"))
            times[t]["allocated_bytes"] = st.st_blocks * 512
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(dst_root, ignore_errors=True)
    return times


def settle():
    """Let the new source age past dedup's racily-clean window (50 ms): a file modified in the
    same clock tick as its copy was written is compared byte for byte on the next run, which a
    benchmark that copies a tree within milliseconds of writing it would otherwise measure."""
    time.sleep(0.2)


def generate(root, files, largest, depth, rng):
    """`files` files of random sizes up to `largest`, spread over a tree `depth` levels deep."""
    dirs = [root]
    for level in range(depth):
        parent = dirs[-1] if level else root
        for i in range(3):
            d = os.path.join(parent, f"d{level}_{i}")
            os.makedirs(d, exist_ok=True)
            dirs.append(d)
    for i in range(files):
        d = rng.choice(dirs)
        write_random(os.path.join(d, f"f{i:06d}.bin"), rng.randint(1, largest), rng)
    return dirs


def write_random(path, size, rng, mode="wb"):
    with open(path, mode) as f:
        f.write(rng.randbytes(size))


def mutate(root, rng, round_no):
    """Append to 5 % of the files and add 5 % new files."""
    all_files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    dirs = sorted({os.path.dirname(p) for p in all_files})
    n = max(1, len(all_files) // 20)
    for p in rng.sample(all_files, n):
        write_random(p, rng.randint(1, 4096), rng, "ab")
    for i in range(n):
        write_random(os.path.join(rng.choice(dirs), f"new{round_no}_{i}.bin"), rng.randint(1, 10_000), rng)


def timed(argv, cpu=None):
    """Wall time of one run in ms; with `cpu`, the run's CPU time (user + system, ms) is appended
    to it: on a shared machine the CPU time holds where the wall time swings with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        cpu.append(used * 1000)
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return elapsed


def check_same(src, dst):
    """The destination holds what the source holds (diff -r), so no tool is timed doing less."""
    r = subprocess.run(["diff", "-r", "-q", "--no-dereference", src, dst], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"{dst} differs from {src}:\n{r.stdout.decode(errors='replace')[:2000]}")


def bench_tree(name, base, names, dedup, rounds, incr_rounds, seed, back_to_back=False):
    files, largest, depth = TREES[name]
    rng = random.Random(seed)
    src = os.path.join(base, name, "src")
    shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    generate(src, files, largest, depth, rng)
    settle()
    table = tools(dedup)
    steps = ("first", "noop", "incremental")
    times = {t: {k: [] for k in steps + tuple(s + "_cpu" for s in steps)} for t in names}
    dst_root = os.path.join(DST_BASE or base, name)
    os.makedirs(dst_root, exist_ok=True)
    dst = lambda t: os.path.join(dst_root, "dst-" + t)
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for t in order:
            fresh_dst(t, dst(t))
            subprocess.run(["sync"])
            times[t]["first"].append(timed(table[t][0](src, dst(t)), times[t]["first_cpu"]))
        for t in order:
            if table[t][1]:
                times[t]["noop"].append(timed(table[t][1](src, dst(t)), times[t]["noop_cpu"]))
    for t in names:
        check_same(src, dst(t))
    for r in range(incr_rounds):
        mutate(src, rng, r)
        if not back_to_back:
            # As for the generated tree: a round run within milliseconds of its change finds
            # every copy the last round made "racily clean" and compares it byte for byte, and
            # with two tools the rounds come ~20 ms apart, so a copy settled within the window
            # is compared again round after round; --back-to-back measures exactly that.
            settle()
        order = names[r % len(names):] + names[: r % len(names)]
        for t in order:
            if table[t][1]:
                times[t]["incremental"].append(
                    timed(table[t][1](src, dst(t)), times[t]["incremental_cpu"])
                )
    for t in names:
        if t not in COPY_ONLY:
            check_same(src, dst(t))
    shutil.rmtree(os.path.join(base, name), ignore_errors=True)
    shutil.rmtree(dst_root, ignore_errors=True)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="directory for the trees (tmpfs for 'in RAM')")
    ap.add_argument("--trees", default=",".join(TREES))
    ap.add_argument("--tools", default="dedup,cp,rsync,rsync-HSX,rclone")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--incremental-rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", help="another dedup binary, timed in turn with --dedup as the tool "
                    "'dedup-base' (add it to --tools): an old build against a new one")
    ap.add_argument("--out", default="bench/results/sync.json")
    ap.add_argument("--linux-src", help="a real source tree for the linux row")
    ap.add_argument("--usr-src", default="/usr/share", help="the tree the usr row copies")
    ap.add_argument("--dst-base", help="directory for the destinations, on another file system than --base: "
                    "a copy between two kinds of file system, where copy_file_range is refused "
                    "(e.g. --base on the ext4 disk, --dst-base on tmpfs or an XFS image)")
    ap.add_argument("--back-to-back", action="store_true",
                    help="run each incremental round right after its change, without letting it age "
                         "past dedup's racily-clean window (50 ms)")
    a = ap.parse_args()
    global AGAINST, DST_BASE
    AGAINST = os.path.abspath(a.against) if a.against else None
    DST_BASE = os.path.abspath(a.dst_base) if a.dst_base else None
    names = [t for t in a.tools.split(",") if t]
    if "dedup-base" in names and not AGAINST:
        sys.exit("the tool dedup-base needs --against BIN")
    results = {}
    for tree in a.trees.split(","):
        dedup = os.path.abspath(a.dedup)
        if tree in SPECIAL:
            results[tree] = bench_special(tree, a.base, names, dedup, a.rounds, a.linux_src, a.usr_src)
        else:
            results[tree] = bench_tree(tree, a.base, names, dedup, a.rounds, a.incremental_rounds, a.seed,
                                       a.back_to_back)
        shown = [t for t in names if t in results[tree]]
        cols = [k for k in results[tree][shown[0]] if isinstance(results[tree][shown[0]][k], list)]
        print(f"\n{tree} (medians, ms) " + " ".join(f"{k:>12}" for k in cols))
        nan = float("nan")
        med = {t: {k: statistics.median(results[tree][t][k]) if results[tree][t][k] else nan for k in cols}
               for t in shown}
        for t in shown:
            print(f"  {t:<12} " + " ".join(f"{med[t][k]:12.1f}" for k in cols))
        if "dedup" in shown:
            for t in shown:
                if t == "dedup":
                    continue
                print(f"  dedup/{t:<8} " + " ".join(f"{med['dedup'][k] / med[t][k]:12.2f}" for k in cols))
        # Written after every tree, so a later tree's failure keeps the earlier timings.
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as f:
            json.dump({"base": a.base, "back_to_back": a.back_to_back, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
