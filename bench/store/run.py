#!/usr/bin/env python3
"""Benchmark of `dedup store` against restic, rustic, kopia, borg and bupstash (issues 24 and 41,
scenarios A and C).

Scenario A, per tool, in a fresh repository: first backup -> unchanged backup -> modify (insert
100 bytes at the start of the text file, overwrite 1 MiB in the middle of the random file, add
200 x 4 KiB files, touch the mtime of 1,000 files) -> modified backup -> restore the latest
snapshot -> check with a full data read. Scenario C, the 2nd write: a copy of the (modified)
source under another path, all of whose data the repository holds, backed up with no parent;
its throughput against the first backup's.

The source lives in RAM (--src, tmpfs), repositories on disk (--repos), restores in --restore.
Every tool runs with its default settings, encryption on, password from the environment
(bupstash has no password: its key file, made before the first backup, is its secret). Tools
run in turn within each round (the order rotates per round), so a slow minute of the shared
machine lands on all of them; the modification is undone before the next tool starts. Every
command runs under /usr/bin/time -v for its peak RSS and its CPU time (user + system). Prints
medians, dedup's ratio to each peer and to the fastest, the same for the CPU time (on a shared
machine the CPU time holds where the wall time swings with the load), repository sizes and peak
RSS, and writes every measurement as JSON.

After these steps (issue 25), forget + prune: every tool keeps the last snapshot of each source
and frees what the others alone held — `forget --keep-last 1 --prune` (dedup, restic, rustic),
`prune --keep-last 1` then `compact` (borg), and for kopia a policy of the latest snapshot only,
`snapshot expire --all --delete`, then `maintenance run --full --safety=none` (kopia keeps
unreferenced contents for hours by default; without --safety=none it would free nothing), and
for bupstash `rm` of the older snapshots then `gc`. bupstash has no command that reads back and
verifies every pack, so its check column stays empty.

  bench/store/run.py                                # full size, 3 rounds, all tools
  bench/store/run.py --scale 0.1 --rounds 1 --tools dedup,restic   # quick, for development
  bench/store/run.py --tools dedup,dedup-base --dedup-base OLD/dedup  # two builds of dedup, A/B
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

PASSWORD = "bench-store-password"
TREE_BYTES = 2_200_000_000
RANDOM_BYTES = 1 << 30
TEXT_BYTES = 512 << 20
STEPS = ["first", "unchanged", "modified", "restore", "check", "second_write", "forget_prune"]
# Where bupstash's query finds the snapshot `restore` wants (tools tag each backup with its step).
LATEST_LABEL = "modified"


# ---------------------------------------------------------------------------------------- data
def generate(src, scale, seed):
    """The source of scenario A at `scale`; kept between runs when its stamp matches."""
    stamp = os.path.join(os.path.dirname(src), f".stamp-{os.path.basename(src)}")
    want = f"scale={scale} seed={seed}\n"
    if os.path.isdir(src) and os.path.exists(stamp) and open(stamp).read() == want:
        return
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    rng = random.Random(seed)
    copy_usr(os.path.join(src, "tree"), int(TREE_BYTES * scale))
    with open(os.path.join(src, "random.bin"), "wb") as f:
        left = int(RANDOM_BYTES * scale)
        while left > 0:
            n = min(left, 64 << 20)
            f.write(rng.randbytes(n))
            left -= n
    write_text(os.path.join(src, "text.txt"), int(TEXT_BYTES * scale), rng)
    with open(stamp, "w") as f:
        f.write(want)


def copy_usr(dst, budget):
    """Copies of /usr/share and /usr/include (regular files, directories, symlinks) up to
    `budget` bytes of file content, whole copies first, then a partial one."""
    sources = ["/usr/share", "/usr/include"]
    copy = 0
    while budget > 0:
        for root in sources:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                rel = os.path.relpath(dirpath, "/usr")
                out = os.path.join(dst, f"copy{copy}", rel)
                os.makedirs(out, exist_ok=True)
                for name in sorted(filenames):
                    path = os.path.join(dirpath, name)
                    if os.path.islink(path):
                        os.symlink(os.readlink(path), os.path.join(out, name))
                        continue
                    if not os.path.isfile(path):
                        continue
                    try:
                        shutil.copy2(path, os.path.join(out, name))
                    except OSError:
                        continue
                    budget -= os.path.getsize(path)
                    if budget <= 0:
                        return
        copy += 1


def write_text(path, size, rng):
    """Compressible, non-repeating text: lines of words drawn from a made-up vocabulary."""
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(20_000)]
    written = 0
    line = 0
    with open(path, "w") as f:
        while written < size:
            words = rng.choices(vocab, k=200_000)
            parts = []
            for i in range(0, len(words), 12):
                line += 1
                parts.append(f"{line}: " + " ".join(words[i:i + 12]) + "\n")
            block = "".join(parts)[: size - written]
            f.write(block)
            written += len(block)


def all_files(src):
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(src, "tree")):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                out.append(path)
    return out


def modify(src, seed):
    """The modification step; returns what `undo` needs to put the source back."""
    rng = random.Random(seed + 1)
    text = os.path.join(src, "text.txt")
    tmp = text + ".tmp"
    with open(text, "rb") as fin, open(tmp, "wb") as fout:
        fout.write(b"inserted at the start of the text file by the benchmark's modification.....\n"[:99] + b"\n")
        shutil.copyfileobj(fin, fout, 16 << 20)
    os.replace(tmp, text)
    rnd = os.path.join(src, "random.bin")
    size = os.path.getsize(rnd)
    at = size // 2
    with open(rnd, "r+b") as f:
        f.seek(at)
        saved = f.read(1 << 20)
        f.seek(at)
        f.write(rng.randbytes(len(saved)))
    files = all_files(src)
    new_dir = os.path.join(src, "tree", "added")
    os.makedirs(new_dir)
    for i in range(200):
        with open(os.path.join(new_dir, f"new{i:03}.bin"), "wb") as f:
            f.write(rng.randbytes(4096))
    touched = rng.sample(files, min(1000, len(files)))
    mtimes = {p: os.stat(p).st_mtime_ns for p in touched}
    now = time.time_ns()
    for p in touched:
        os.utime(p, ns=(now, now))
    return {"at": at, "saved": saved, "mtimes": mtimes}


def undo(src, state):
    text = os.path.join(src, "text.txt")
    tmp = text + ".tmp"
    with open(text, "rb") as fin, open(tmp, "wb") as fout:
        fin.seek(100)
        shutil.copyfileobj(fin, fout, 16 << 20)
    os.replace(tmp, text)
    with open(os.path.join(src, "random.bin"), "r+b") as f:
        f.seek(state["at"])
        f.write(state["saved"])
    shutil.rmtree(os.path.join(src, "tree", "added"))
    for p, ns in state["mtimes"].items():
        os.utime(p, ns=(ns, ns))


# ---------------------------------------------------------------------------------------- tools
class Tool:
    """One backup program: its commands for each step, run in `repo` with a private config."""

    def __init__(self, name, repo, dedup):
        self.name = name
        # `dedup-base` is another build of dedup (--dedup-base), run with dedup's commands.
        self.kind = "dedup" if name == "dedup-base" else name
        self.repo = repo
        self.dedup = dedup
        self.conf = repo + ".conf"

    def env(self):
        env = dict(os.environ)
        env.update({
            "DEDUP_PASSWORD": PASSWORD,
            "RESTIC_PASSWORD": PASSWORD,
            "RUSTIC_PASSWORD": PASSWORD,
            "KOPIA_PASSWORD": PASSWORD,
            "BORG_PASSPHRASE": PASSWORD,
            "KOPIA_CONFIG_PATH": os.path.join(self.conf, "kopia.config"),
            "KOPIA_CHECK_FOR_UPDATES": "false",
            "BORG_BASE_DIR": self.conf,
            "XDG_CACHE_HOME": os.path.join(self.conf, "cache"),
            # dedup remembers each repository it used (issue 40); every run makes a new one at
            # the same path, which a shared memory would refuse as a substituted repository.
            "XDG_STATE_HOME": os.path.join(self.conf, "state"),
            "BUPSTASH_REPOSITORY": self.repo,
            "BUPSTASH_KEY": os.path.join(self.conf, "bupstash.key"),
            "BUPSTASH_SEND_LOG": os.path.join(self.conf, "bupstash.sendlog"),
            "BUPSTASH_QUERY_CACHE": os.path.join(self.conf, "bupstash.querycache"),
        })
        return env

    def init(self):
        r, d = self.repo, self.dedup
        key = os.path.join(self.conf, "bupstash.key")
        return {
            "bupstash": ["sh", "-c", f'bupstash new-key -o "{key}" && exec bupstash init -r "{r}"'],
            "dedup": [d, "store", "init", "-q", "-r", r],
            "restic": ["restic", "-q", "-r", r, "init"],
            "rustic": ["rustic", "-r", r, "init"],
            "kopia": ["kopia", "repository", "create", "filesystem", "--path", r],
            "borg": ["borg", "init", "-e", "repokey", r],
        }[self.kind]

    def backup(self, path, label):
        r, d = self.repo, self.dedup
        return {
            "dedup": [d, "store", "backup", "-q", "-r", r, path],
            "restic": ["restic", "-q", "-r", r, "backup", path],
            "rustic": ["rustic", "-r", r, "backup", path],
            "kopia": ["kopia", "snapshot", "create", path],
            "borg": ["borg", "create", f"{r}::{label}", path],
            "bupstash": ["bupstash", "put", "-q", f"bench={label}", path],
        }[self.kind]

    def restore(self, path, target):
        r, d = self.repo, self.dedup
        if self.name == "kopia":
            listing = subprocess.run(["kopia", "snapshot", "list", "--json", path],
                                     env=self.env(), capture_output=True, check=True)
            root = json.loads(listing.stdout)[-1]["rootEntry"]["obj"]
            return ["kopia", "snapshot", "restore", root, target]
        return {
            "dedup": [d, "store", "restore", "-q", "-r", r, "latest", "--target", target],
            "restic": ["restic", "-q", "-r", r, "restore", "latest", "--target", target],
            "rustic": ["rustic", "-r", r, "restore", "latest", target],
            "borg": ["sh", "-c", f'cd "{target}" && exec borg extract "{r}::{LATEST_LABEL}"'],
            "bupstash": ["bupstash", "restore", "-q", "--into", target, f"bench={LATEST_LABEL}"],
        }[self.kind]

    def check(self):
        r, d = self.repo, self.dedup
        return {
            "dedup": [d, "store", "check", "-q", "-r", r, "--read-data"],
            "restic": ["restic", "-q", "-r", r, "check", "--read-data"],
            "rustic": ["rustic", "-r", r, "check", "--read-data"],
            "kopia": ["kopia", "snapshot", "verify", "--verify-files-percent=100"],
            "borg": ["borg", "check", "--verify-data", r],
            "bupstash": None,
        }[self.kind]

    def forget_prune(self):
        """Commands that keep the last snapshot of each source and free the rest (timed
        together)."""
        r, d = self.repo, self.dedup
        keep_only_latest = ["kopia", "policy", "set", "--global", "--keep-latest", "1",
                            "--keep-hourly", "0", "--keep-daily", "0", "--keep-weekly", "0",
                            "--keep-monthly", "0", "--keep-annual", "0"]
        return {
            "dedup": [[d, "store", "forget", "-q", "-r", r, "--keep-last", "1", "--prune"]],
            "restic": [["restic", "-q", "-r", r, "forget", "--keep-last", "1", "--prune"]],
            "rustic": [["rustic", "-r", r, "forget", "--keep-last", "1", "--prune"]],
            "kopia": [keep_only_latest, ["kopia", "snapshot", "expire", "--all", "--delete"],
                      ["kopia", "maintenance", "run", "--full", "--safety=none"]],
            "borg": [["borg", "prune", "--keep-last", "1", r], ["borg", "compact", r]],
            "bupstash": [["bupstash", "rm", "-q", "--allow-many", "bench=first", "or", "bench=unchanged"],
                         ["bupstash", "gc", "-q"]],
        }[self.kind]


def run(tool, argv, timed=True):
    """Runs `argv` under /usr/bin/time -v; returns (seconds, peak RSS in KiB, CPU seconds)."""
    full = ["/usr/bin/time", "-v"] + argv
    start = time.perf_counter()
    r = subprocess.run(full, env=tool.env(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    err = r.stderr.decode(errors="replace")
    # borg exits 1 for warnings (e.g. a file changed while read): still a finished run.
    ok = r.returncode == 0 or (tool.name == "borg" and r.returncode == 1)
    if not ok:
        sys.exit(f"{tool.name}: {' '.join(argv)} failed ({r.returncode}):\n{err[-3000:]}")
    rss = 0
    cpu = 0.0
    for line in err.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1])
        elif "User time (seconds)" in line or "System time (seconds)" in line:
            cpu += float(line.split(":")[1])
    return elapsed, rss, cpu


def du(path):
    total = 0
    for dirpath, _, filenames in os.walk(path):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def tree_bytes(path):
    return du(path)


def find_restored(target, src):
    """Where in `target` a tool put the restored copy of `src` (the directory holding text.txt)."""
    for dirpath, dirnames, filenames in os.walk(target):
        if "text.txt" in filenames and "random.bin" in filenames:
            return dirpath
    sys.exit(f"no restored copy of {src} under {target}")


def check_same(src, restored, name):
    r = subprocess.run(["diff", "-r", "-q", "--no-dereference", src, restored], capture_output=True)
    if r.returncode != 0:
        sys.exit(f"{name}: restore differs from the source:\n{r.stdout.decode(errors='replace')[:2000]}")


# ext4 does not hand out an inode freed less than dirty_expire_centisecs ago (30 s by default):
# it scans the inode table for another (`recently_deleted`), and a restore right after the
# previous one was removed spent 2-6x as long in the kernel creating files (journal, "Deep
# paths, and what restores on this disk measure"). Each restore waits until that long after the
# last removal of a tree, so that it measures the tool, not the file system's allocator.
LAST_REMOVAL = [0.0]


def removed(path):
    shutil.rmtree(path, ignore_errors=True)
    LAST_REMOVAL[0] = time.monotonic()


def settle_removals():
    subprocess.run(["sync"])
    try:
        with open("/proc/sys/vm/dirty_expire_centisecs") as f:
            expire = int(f.read()) / 100
    except OSError:
        expire = 30
    wait = LAST_REMOVAL[0] + expire + 1 - time.monotonic()
    if wait > 0:
        time.sleep(wait)


def scenario(tool, src, copy, restore_dir, seed, verify, log):
    """One pass of scenarios A and C for `tool`; returns {step: (seconds, rss, cpu)} and the
    size."""
    out = {}
    shutil.rmtree(tool.repo, ignore_errors=True)
    shutil.rmtree(tool.conf, ignore_errors=True)
    os.makedirs(tool.conf)
    if tool.name == "kopia":
        os.makedirs(tool.repo)
    # Timestamps settle before the first backup, so the unchanged pass may trust them.
    time.sleep(1.2)
    run(tool, tool.init())
    out["first"] = run(tool, tool.backup(src, "first"))
    log(tool.name, "first", out["first"])
    out["unchanged"] = run(tool, tool.backup(src, "unchanged"))
    log(tool.name, "unchanged", out["unchanged"])
    state = modify(src, seed)
    try:
        out["modified"] = run(tool, tool.backup(src, "modified"))
        log(tool.name, "modified", out["modified"])
        size = du(tool.repo)
        removed(restore_dir)
        os.makedirs(restore_dir)
        settle_removals()
        out["restore"] = run(tool, tool.restore(src, restore_dir))
        log(tool.name, "restore", out["restore"])
        if verify:
            check_same(src, find_restored(restore_dir, src), tool.name)
        removed(restore_dir)
        if tool.check():
            out["check"] = run(tool, tool.check())
            log(tool.name, "check", out["check"])
        if copy:
            shutil.rmtree(copy, ignore_errors=True)
            subprocess.run(["cp", "-a", src, copy], check=True)
            out["second_write"] = run(tool, tool.backup(copy, "second"))
            log(tool.name, "second_write", out["second_write"])
            shutil.rmtree(copy, ignore_errors=True)
        seconds = peak = cpu = 0
        for argv in tool.forget_prune():
            s, m, c = run(tool, argv)
            seconds, peak, cpu = seconds + s, max(peak, m), cpu + c
        out["forget_prune"] = (seconds, peak, cpu)
        log(tool.name, "forget_prune", out["forget_prune"])
    finally:
        undo(src, state)
    shutil.rmtree(tool.repo, ignore_errors=True)
    shutil.rmtree(tool.conf, ignore_errors=True)
    return out, size


def mib(n):
    return n / (1 << 20)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="/dev/shm/storebench/src", help="the source (in RAM)")
    ap.add_argument("--repos", default="/work/storebench", help="repositories (on disk)")
    ap.add_argument("--restore", default="/dev/shm/storebench/restore", help="restore target")
    ap.add_argument("--tools", default="dedup,restic,rustic,kopia,borg")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    ap.add_argument("--dedup-base", help="another build of dedup, the tool `dedup-base` (A/B runs)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the full data set")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-second-write", action="store_true", help="skip scenario C")
    ap.add_argument("--verify", action="store_true", help="diff every restore against the source (untimed)")
    ap.add_argument("--out", default="bench/results/store/scenario-a.json")
    a = ap.parse_args()
    names = [t for t in a.tools.split(",") if t]
    dedup = os.path.abspath(a.dedup)
    for n in names:
        if n == "dedup-base" and not a.dedup_base:
            sys.exit("the tool dedup-base needs --dedup-base BINARY")
        if n not in ("dedup", "dedup-base") and shutil.which(n) is None:
            sys.exit(f"{n} is not installed: run bench/store/install-peers.sh")
    generate(a.src, a.scale, a.seed)
    total = tree_bytes(a.src)
    copy = None if a.no_second_write else a.src.rstrip("/") + "-copy"
    os.makedirs(a.repos, exist_ok=True)
    print(f"source {a.src}: {mib(total):.0f} MiB; repositories in {a.repos}", flush=True)

    def log(name, step, m):
        print(f"  {name:<10} {step:<13} {m[0]:8.2f} s {m[1] / 1024:8.0f} MiB {m[2]:8.2f} s CPU", flush=True)

    times = {t: {s: [] for s in STEPS} for t in names}
    cpu = {t: {s: [] for s in STEPS} for t in names}
    rss = {t: {s: [] for s in STEPS} for t in names}
    sizes = {t: [] for t in names}
    for r in range(a.rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        print(f"round {r + 1}/{a.rounds}: {', '.join(order)}", flush=True)
        for t in order:
            build = os.path.abspath(a.dedup_base) if t == "dedup-base" else dedup
            tool = Tool(t, os.path.join(a.repos, t), build)
            out, size = scenario(tool, a.src, copy, a.restore, a.seed, a.verify and r == 0, log)
            for step, (secs, kib, used) in out.items():
                times[t][step].append(secs)
                cpu[t][step].append(used)
                rss[t][step].append(kib)
            sizes[t].append(size)

    med = {t: {s: statistics.median(v) for s, v in times[t].items() if v} for t in names}
    med_cpu = {t: {s: statistics.median(v) for s, v in cpu[t].items() if v} for t in names}
    peak = {t: max(max(v) for v in rss[t].values() if v) for t in names}
    size = {t: statistics.median(sizes[t]) for t in names}
    cols = ["first", "unchanged", "modified", "restore", "check", "forget_prune"]
    peers = [t for t in names if t != "dedup"]

    def ratio(m, a_tool, b_tool, c):
        if c not in m[a_tool] or c not in m[b_tool] or not m[b_tool][c]:
            return float("nan")
        return m[a_tool][c] / m[b_tool][c]

    for title, m in (("wall", med), ("CPU (user + system)", med_cpu)):
        print(f"\nscenario A, {title}: medians of {a.rounds} rounds (s); repository after 3 snapshots; "
              "peak RSS")
        print(f"  {'tool':<18}" + "".join(f"{c[:12]:>13}" for c in cols) + f"{'repo MiB':>10}{'RSS MiB':>9}")
        for t in names:
            print(f"  {t:<18}" + "".join(f"{m[t].get(c, float('nan')):13.2f}" for c in cols)
                  + f"{mib(size[t]):10.0f}{peak[t] / 1024:9.0f}")
        if "dedup" in names and peers:
            for t in peers:
                print(f"  {'dedup/' + t:<18}" + "".join(f"{ratio(m, 'dedup', t, c):13.2f}" for c in cols)
                      + f"{size['dedup'] / size[t]:10.4f}{peak['dedup'] / peak[t]:9.2f}")
            best = {c: min((t for t in peers if c in m[t]), key=lambda t: m[t][c], default=None)
                    for c in cols}
            print("  dedup / fastest peer: " + ", ".join(
                f"{c} {ratio(m, 'dedup', best[c], c):.2f} ({best[c]})" for c in cols if best[c]))
    if "dedup" in names and peers:
        small = min(peers, key=lambda t: size[t])
        lean = min(peers, key=lambda t: peak[t])
        print(f"  repository / smallest peer ({small}): {size['dedup'] / size[small]:.4f}; "
              f"peak RSS / leanest peer ({lean}): {peak['dedup'] / peak[lean]:.2f}")
    if copy:
        print("\nscenario C (2nd write): throughput of the copy's backup / the first backup's")
        for t in names:
            ratio2 = med[t]["first"] / med[t]["second_write"]
            print(f"  {t:<10} first {med[t]['first']:.2f} s, 2nd write {med[t]['second_write']:.2f} s: "
                  f"{ratio2:.2f}x")
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"src": a.src, "bytes": total, "scale": a.scale, "rounds": a.rounds,
                   "times": times, "cpu_seconds": cpu, "rss_kib": rss, "repo_bytes": sizes}, f, indent=1)


if __name__ == "__main__":
    main()
