#!/usr/bin/env python3
"""The writable file system's benchmark (issue 38): dedup's writable volume against ddumbfs,
bindfs -o big_writes (the FUSE ceiling) and the raw disk, interleaved in one run on one disk.

Each round runs every system in turn on the same data:
  1st write   a file of random data (--size-mib, default 1024) written with dd conv=fsync
  2nd write   the same bytes to a new name
  cold read   the first file read after dropping the page cache
  copy 1, 2   cp -a SRC (default /usr/share) into the mount, twice (small files), each
              followed by an fsync in the mount (a commit for dedup); what the second adds
  read back   tar cf - of the first copy | wc -c
  space       bytes the system's backing store takes after both copies (allocated)
  peak RSS    VmHWM of the mount process
and prints medians per system and the ratios the issue sets as targets.

Needs root (mounts, drop_caches). ddumbfs is used where --ddumbfs names the folder holding
`ddumbfs` and `mkddumbfs` (bench/fs/README.md says how to build it); bindfs from Debian.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def drop_caches():
    sh("sync")
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def timed(fn):
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def wait_mounted(point, proc=None, timeout=60):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        with open("/proc/self/mounts") as f:
            if any(line.split()[1] == point for line in f):
                return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the file system of {point} ended before mounting")
        time.sleep(0.05)
    raise RuntimeError(f"{point} did not mount")


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def commit(point):
    """fsyncs a file in the mount: dedup commits the volume, the others sync that file."""
    fd = os.open(os.path.join(point, ".commit"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.fsync(fd)
    os.close(fd)


def du_bytes(path):
    # Allocated bytes, not apparent sizes: ddumbfs's block file is a sparse file of the volume's
    # whole size.
    out = subprocess.run(["du", "-s", "--block-size=1", path], check=True, capture_output=True,
                         text=True)
    return int(out.stdout.split()[0])


class System:
    """One file system under test: set up over a fresh backing folder, measured, torn down."""

    def __init__(self, name, work):
        self.name, self.work = name, os.path.join(work, name)
        self.point = os.path.join(self.work, "mnt")
        self.proc = None

    def fresh(self):
        if os.path.exists(self.work):
            shutil.rmtree(self.work)
        os.makedirs(self.point)

    def start(self):
        pass

    def pid(self):
        return self.proc.pid if self.proc else None

    def stop(self):
        pass

    def backing(self):
        return self.point


class Raw(System):
    pass


class Bindfs(System):
    def start(self):
        back = os.path.join(self.work, "back")
        os.makedirs(back)
        self.proc = subprocess.Popen(["bindfs", "-f", "-o", "big_writes", back, self.point])
        wait_mounted(self.point, self.proc)

    def stop(self):
        sh("fusermount", "-u", self.point) if shutil.which("fusermount") else sh("fusermount3", "-u", self.point)
        self.proc.wait()

    def backing(self):
        return os.path.join(self.work, "back")


class Ddumbfs(System):
    def __init__(self, name, work, bindir):
        super().__init__(name, work)
        self.bindir = bindir

    def start(self):
        vol = os.path.join(self.work, "vol")
        os.makedirs(vol)
        sh(os.path.join(self.bindir, "mkddumbfs"), "-f", "-B", "128k", "-s", "20G", vol,
           stdout=subprocess.DEVNULL)
        self.proc = subprocess.Popen(
            [os.path.join(self.bindir, "ddumbfs"), self.point, "-f", "-o", f"parent={vol}"],
            stdout=subprocess.DEVNULL)
        wait_mounted(self.point, self.proc)

    def stop(self):
        sh("fusermount", "-u", self.point)
        self.proc.wait()

    def backing(self):
        return os.path.join(self.work, "vol")


class Dedup(System):
    def __init__(self, name, work, binary):
        super().__init__(name, work)
        self.binary = binary
        self.env = dict(os.environ, DEDUP_PASSWORD="bench")

    def start(self):
        repo = os.path.join(self.work, "repo")
        sh(self.binary, "store", "init", "-r", repo, env=self.env, stdout=subprocess.DEVNULL)
        self.proc = subprocess.Popen(
            [self.binary, "store", "-r", repo, "mount", "--writable", "bench", self.point],
            env=self.env, stderr=subprocess.DEVNULL)
        wait_mounted(self.point, self.proc)

    def stop(self):
        sh("fusermount3", "-u", self.point)
        if self.proc.wait() != 0:
            raise RuntimeError("dedup's mount ended with an error")

    def backing(self):
        return os.path.join(self.work, "repo")


def copy(src, dst, r):
    out = subprocess.run(["cp", "-a", src, dst], stderr=subprocess.PIPE, text=True)
    r["cp_errors"] = r.get("cp_errors", 0) + len(out.stderr.splitlines())


def measure(system, random_file, src, size):
    system.fresh()
    system.start()
    p = system.point
    mb = size / 1e6
    r = {}
    r["write1"] = mb / timed(lambda: sh("dd", f"if={random_file}", f"of={p}/r1", "bs=1M",
                                        "conv=fsync", stderr=subprocess.DEVNULL))
    r["write2"] = mb / timed(lambda: sh("dd", f"if={random_file}", f"of={p}/r2", "bs=1M",
                                        "conv=fsync", stderr=subprocess.DEVNULL))
    drop_caches()
    r["read"] = mb / timed(lambda: sh("dd", f"if={p}/r1", "of=/dev/null", "bs=1M",
                                      stderr=subprocess.DEVNULL))
    for f in ("r1", "r2"):
        os.remove(os.path.join(p, f))
    # cp's status is not checked: ddumbfs fails to set the times of symlinks (it follows them)
    # and cp then exits 1; the count of its complaints is kept instead.
    r["copy1"] = timed(lambda: copy(src, f"{p}/copy1", r))
    commit(p)
    space1 = du_bytes(system.backing())
    r["copy2"] = timed(lambda: copy(src, f"{p}/copy2", r))
    commit(p)
    r["copy2_adds_pct"] = 100 * (du_bytes(system.backing()) - space1) / max(space1, 1)
    drop_caches()
    r["tar"] = timed(lambda: subprocess.run(f"tar cf - -C {p} copy1 | wc -c", shell=True,
                                            check=True, stdout=subprocess.DEVNULL))
    pid = system.pid()
    r["rss_mib"] = (peak_rss_kib(pid) or 0) / 1024 if pid else 0
    system.stop()
    r["space_mb"] = du_bytes(system.backing()) / 1e6
    shutil.rmtree(system.work)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dedup", required=True, help="the dedup binary (a release build)")
    ap.add_argument("--dedup-before", help="another dedup binary measured in the same run, "
                    "interleaved (the build before a change): its figures beside the new one's")
    ap.add_argument("--ddumbfs", help="folder holding ddumbfs and mkddumbfs")
    ap.add_argument("--work", default="/var/tmp/dedup-fs-bench", help="where the file systems live")
    ap.add_argument("--src", default="/usr/share", help="the tree of small files to copy")
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root (mounts, drop_caches)")
    os.makedirs(args.work, exist_ok=True)
    random_file = os.path.join("/dev/shm", "dedup-fs-bench-random")
    sh("dd", "if=/dev/urandom", f"of={random_file}", "bs=1M", f"count={args.size_mib}",
       stderr=subprocess.DEVNULL)
    systems = [Raw("raw", args.work), Bindfs("bindfs", args.work)]
    if args.ddumbfs:
        systems.append(Ddumbfs("ddumbfs", args.work, args.ddumbfs))
    if args.dedup_before:
        systems.append(Dedup("dedup-before", args.work, args.dedup_before))
    systems.append(Dedup("dedup", args.work, args.dedup))
    results = {s.name: [] for s in systems}
    try:
        for rnd in range(args.rounds):
            for system in systems:
                r = measure(system, random_file, args.src, args.size_mib << 20)
                results[system.name].append(r)
                print(f"round {rnd + 1} {system.name}: " +
                      " ".join(f"{k}={v:.1f}" for k, v in r.items()), flush=True)
    finally:
        os.remove(random_file)
    keys = ["write1", "write2", "read", "copy1", "copy2", "copy2_adds_pct", "tar", "space_mb",
            "rss_mib"]
    med = {n: {k: statistics.median(r[k] for r in rs) for k in keys} for n, rs in results.items()}
    print("\n| system | 1st write MB/s | 2nd write MB/s | cold read MB/s | copy 1 s | copy 2 s "
          "| copy 2 adds % | tar out s | space MB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n, m in med.items():
        print(f"| {n} | " + " | ".join(f"{m[k]:.1f}" for k in keys) + " |")
    d, b = med["dedup"], med["bindfs"]
    print("\nratios (targets in brackets):")
    print(f"  dedup 2nd write / bindfs write: {d['write2'] / b['write1']:.2f} [>= 0.8]")
    if "ddumbfs" in med:
        x = med["ddumbfs"]
        print(f"  dedup 2nd write / ddumbfs 2nd write: {d['write2'] / x['write2']:.2f} [>= 1.5]")
        print(f"  dedup 1st write / ddumbfs 1st write: {d['write1'] / x['write1']:.2f} [>= 1]")
        print(f"  dedup read / ddumbfs read: {d['read'] / x['read']:.2f} [>= 1]")
        print(f"  dedup copy 1 / ddumbfs copy 1: {d['copy1'] / x['copy1']:.2f} [<= 0.25]")
        print(f"  dedup copy 2 / ddumbfs copy 2: {d['copy2'] / x['copy2']:.2f} [<= 0.25]")
    print(f"  dedup copy 1 / bindfs copy 1: {d['copy1'] / b['copy1']:.2f} [<= 2]")
    print(f"  dedup: the second copy adds {d['copy2_adds_pct']:.2f} % [<= 1]")
    print(f"  dedup peak RSS: {d['rss_mib']:.0f} MiB [<= 200]")
    if "dedup-before" in med:
        was = med["dedup-before"]
        print("\ndedup / dedup-before (speeds: above 1 is faster; times, RSS: below 1 is less):")
        for k in keys:
            print(f"  {k}: {d[k] / was[k]:.2f}" if was[k] else f"  {k}: -")


if __name__ == "__main__":
    main()
