#!/usr/bin/env python3
"""copy_ab.py ROUNDS SRC BIN...: the small-file copies of bench/fs/run.py alone, for comparing
builds of dedup: for each round and each binary in turn, a fresh writable volume on /var/tmp,
`cp -a SRC` into it twice (copy 1 into an empty volume, copy 2 beside it), each timed up to cp's
exit; prints each binary's median seconds and the ratio of each to the first binary."""
import os, shutil, statistics, subprocess, sys, time

rounds, src, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
env = dict(os.environ, DEDUP_PASSWORD="bench")
res = {b: {"copy1": [], "copy2": []} for b in bins}
work = "/var/tmp/copy-ab"


def timed(cmd):
    start = time.monotonic()
    subprocess.run(cmd, check=True)
    return time.monotonic() - start


for r in range(rounds):
    for b in bins:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work + "/mnt")
        subprocess.run([b, "store", "init", "-r", work + "/repo"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        mount = subprocess.Popen([b, "store", "-r", work + "/repo", "mount", "--writable", "bench",
                                  work + "/mnt"], env=env, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.ismount(work + "/mnt"):
                break
            time.sleep(0.05)
        res[b]["copy1"].append(timed(["cp", "-a", src, work + "/mnt/copy1"]))
        res[b]["copy2"].append(timed(["cp", "-a", src, work + "/mnt/copy2"]))
        subprocess.run(["fusermount3", "-u", work + "/mnt"], check=True)
        mount.wait()
        shutil.rmtree(work, ignore_errors=True)
first = bins[0]
for b in bins:
    line = [b]
    for k, v in res[b].items():
        m = statistics.median(v)
        ratio = m / statistics.median(res[first][k])
        line.append(f"{k} {m:.2f} s ({ratio:.2f}x; {', '.join(f'{x:.2f}' for x in v)})")
    print("  ".join(line))
