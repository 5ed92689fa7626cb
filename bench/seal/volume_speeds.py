#!/usr/bin/env python3
"""volume_speeds.py ROUNDS BIN...: for each round and each binary in turn, a fresh writable volume on
/var/tmp, 256 MiB of random bytes written (dd bs=1M conv=fsync), the same again to a second
name, then the first read after dropping caches; prints each binary's median MB/s."""
import os, shutil, statistics, subprocess, sys, time
rounds, bins = int(sys.argv[1]), sys.argv[2:]
size = 256 << 20
subprocess.run(["dd", "if=/dev/urandom", "of=/dev/shm/volume-speeds-256", "bs=1M", "count=256"], check=True, stderr=subprocess.DEVNULL)
env = dict(os.environ, DEDUP_PASSWORD="bench")
res = {b: {"w1": [], "w2": [], "read": []} for b in bins}
def timed(cmd):
    t = time.monotonic(); subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL); return size / 1e6 / (time.monotonic() - t)
for r in range(rounds):
    for b in bins:
        work = "/var/tmp/volume-speeds"; shutil.rmtree(work, ignore_errors=True); os.makedirs(work + "/mnt")
        subprocess.run([b, "store", "init", "-r", work + "/repo"], env=env, check=True, stdout=subprocess.DEVNULL)
        p = subprocess.Popen([b, "store", "-r", work + "/repo", "mount", "--writable", "bench", work + "/mnt"], env=env, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.ismount(work + "/mnt"): break
            time.sleep(0.05)
        m = work + "/mnt"
        res[b]["w1"].append(timed(["dd", "if=/dev/shm/volume-speeds-256", f"of={m}/r1", "bs=1M", "conv=fsync"]))
        res[b]["w2"].append(timed(["dd", "if=/dev/shm/volume-speeds-256", f"of={m}/r2", "bs=1M", "conv=fsync"]))
        subprocess.run(["sync"]); open("/proc/sys/vm/drop_caches", "w").write("3\n")
        res[b]["read"].append(timed(["dd", f"if={m}/r1", "of=/dev/null", "bs=1M"]))
        subprocess.run(["fusermount3", "-u", m], check=True); p.wait()
        shutil.rmtree(work, ignore_errors=True)
for b in bins:
    print(b, " ".join(f"{k} {statistics.median(v):.0f} MB/s ({', '.join(f'{x:.0f}' for x in v)})" for k, v in res[b].items()))
os.remove("/dev/shm/volume-speeds-256")
