#!/usr/bin/env python3
"""phase_cpu.py ROUNDS SIZE_MIB BIN...: the writable volume's three speeds (issue 38) with the
mount process's CPU beside each. For each round and each binary in turn (so that a busy moment
of a shared machine lands on all of them): a fresh volume on /var/tmp, SIZE_MIB of random bytes
written (dd bs=1M conv=fsync), the same bytes to a second name, then the first file read after
dropping caches. For each phase it prints the median MB/s, the mount's CPU seconds (user +
system, all its threads, from /proc) against the phase's wall seconds, and the CPU split by
thread name (FUSE request threads, sealing pool, read-ahead...). Root (mounts, drop_caches)."""
import collections, os, shutil, statistics, subprocess, sys, time

rounds, size_mib, bins = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
size = size_mib << 20
TICK = os.sysconf("SC_CLK_TCK")
SRC = f"/dev/shm/phase-cpu-{size_mib}"
WORK = "/var/tmp/phase-cpu"


def threads(pid):
    """CPU seconds so far of each of `pid`'s threads, by thread name (summed)."""
    by_name = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        # Fields 14 and 15 of stat(5) (utime, stime), counted from the state, field 3.
        by_name[name.rstrip("0123456789-")] += (int(fields[11]) + int(fields[12])) / TICK
    return by_name


def process_cpu(pid):
    """CPU seconds of `pid` so far, including threads that have ended."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def phase(pid, cmd):
    cpu, split = process_cpu(pid), threads(pid)
    started = time.monotonic()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - started
    after = threads(pid)
    return wall, process_cpu(pid) - cpu, {k: after[k] - split.get(k, 0) for k in after}


subprocess.run(["dd", "if=/dev/urandom", f"of={SRC}", "bs=1M", f"count={size_mib}"], check=True,
               stderr=subprocess.DEVNULL)
env = dict(os.environ, DEDUP_PASSWORD="bench")
results = {b: collections.defaultdict(list) for b in bins}
for _ in range(rounds):
    for b in bins:
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK + "/mnt")
        subprocess.run([b, "store", "init", "-r", WORK + "/repo"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        mount = subprocess.Popen([b, "store", "-r", WORK + "/repo", "mount", "--writable", "bench",
                                  WORK + "/mnt"], env=env, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.ismount(WORK + "/mnt"):
                break
            time.sleep(0.05)
        m = WORK + "/mnt"
        results[b]["w1"].append(phase(mount.pid, ["dd", f"if={SRC}", f"of={m}/r1", "bs=1M",
                                                  "conv=fsync"]))
        results[b]["w2"].append(phase(mount.pid, ["dd", f"if={SRC}", f"of={m}/r2", "bs=1M",
                                                  "conv=fsync"]))
        subprocess.run(["sync"])
        open("/proc/sys/vm/drop_caches", "w").write("3\n")
        results[b]["read"].append(phase(mount.pid, ["dd", f"if={m}/r1", "of=/dev/null", "bs=1M"]))
        subprocess.run(["fusermount3", "-u", m], check=True)
        mount.wait()
        shutil.rmtree(WORK, ignore_errors=True)
os.remove(SRC)

print(f"{rounds} rounds, {size_mib} MiB, load {os.getloadavg()[0]:.1f} at the end")
for b in bins:
    print(b)
    for name, runs in results[b].items():
        rate = statistics.median(size / 1e6 / wall for wall, _, _ in runs)
        wall = statistics.median(w for w, _, _ in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        split = collections.Counter()
        for _, _, by_name in runs:
            split.update({k: v / len(runs) for k, v in by_name.items()})
        top = ", ".join(f"{k} {v:.2f}" for k, v in split.most_common(5) if v >= 0.005)
        print(f"  {name:5} {rate:6.0f} MB/s  wall {wall:.2f} s  mount CPU {cpu:.2f} s "
              f"({cpu / wall:.2f} cores)  by thread: {top}")
