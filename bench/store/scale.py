#!/usr/bin/env python3
"""Scale of `dedup store` (issue 24): the in-memory index and the unchanged-file pass.

Index: crates/dedup-store/examples/index_scale.rs builds an index of N synthetic blobs (1 MiB
chunks, 16 per pack) for each N of --chunks; bytes per chunk (the tables, and resident memory
added) and nanoseconds per insertion and lookup.

Unchanged-file pass: for each N of --files, a tree of N small files (1,000 per directory, each
with distinct content, so N chunks) in RAM is backed up once, then again unchanged; the second
backup's wall time per file and its peak RSS per file. Cost per item that stays flat as N grows
is linear growth.

  bench/store/scale.py                                    # 1M / 3M / 10M chunks, 100k / 300k / 1M files
  bench/store/scale.py --chunks 1000000 --files 100000    # quick
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

PASSWORD = "bench-store-password"


def run(argv, env=None):
    full = ["/usr/bin/time", "-v"] + argv
    start = time.perf_counter()
    r = subprocess.run(full, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({r.returncode}):\n{r.stderr.decode(errors='replace')[-2000:]}")
    rss = 0
    for line in r.stderr.decode(errors="replace").splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1]) * 1024
    return elapsed, rss, r.stdout.decode()


def make_tree(root, n):
    shutil.rmtree(root, ignore_errors=True)
    for i in range(n):
        d = os.path.join(root, f"d{i // 1000:05}")
        if i % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, f"f{i % 1000:03}"), "w") as f:
            f.write(f"file {i}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", default="1000000,3000000,10000000")
    ap.add_argument("--files", default="100000,300000,1000000")
    ap.add_argument("--src", default="/dev/shm/storescale")
    ap.add_argument("--repo", default="/work/storebench/scale-repo")
    ap.add_argument("--dedup", default=os.environ.get("DEDUP", "target/x86_64-unknown-linux-gnu/release/dedup"))
    ap.add_argument("--out", default="bench/results/store/scale.json")
    a = ap.parse_args()
    results = {"index": [], "files": []}

    print("index: blobs, table B/chunk, resident B/chunk, insert ns, hit ns, miss ns", flush=True)
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "dedup-store", "--example", "index_scale"],
                   check=True, stderr=subprocess.DEVNULL)
    example = "target/x86_64-unknown-linux-gnu/release/examples/index_scale"
    for n in [int(x) for x in a.chunks.split(",") if x]:
        _, rss, out = run([example, str(n)])
        row = json.loads(out)
        row["peak_rss"] = rss
        results["index"].append(row)
        print(f"  {n:>10} {row['table_bytes'] / n:8.1f} {row['resident_bytes'] / n:8.1f} "
              f"{row['insert_ns']:8.0f} {row['hit_ns']:6.0f} {row['miss_ns']:6.0f}", flush=True)

    print("unchanged pass: files, first backup s, unchanged s, us/file, peak RSS MiB, RSS B/file", flush=True)
    env = dict(os.environ, DEDUP_PASSWORD=PASSWORD)
    dedup = os.path.abspath(a.dedup)
    for n in [int(x) for x in a.files.split(",") if x]:
        make_tree(a.src, n)
        shutil.rmtree(a.repo, ignore_errors=True)
        os.makedirs(os.path.dirname(a.repo), exist_ok=True)
        run([dedup, "store", "init", "-q", "-r", a.repo], env)
        time.sleep(1.2)
        first, first_rss, _ = run([dedup, "store", "backup", "-q", "-r", a.repo, a.src], env)
        again, rss, _ = run([dedup, "store", "backup", "-q", "-r", a.repo, a.src], env)
        row = {"files": n, "first_s": first, "first_rss": first_rss, "unchanged_s": again, "unchanged_rss": rss}
        results["files"].append(row)
        print(f"  {n:>10} {first:8.2f} {again:8.2f} {again / n * 1e6:8.2f} {rss / 2**20:8.0f} {rss / n:8.0f}",
              flush=True)
        shutil.rmtree(a.repo, ignore_errors=True)
    shutil.rmtree(a.src, ignore_errors=True)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
