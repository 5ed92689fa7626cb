#!/usr/bin/env python3
"""Object-storage rows of the store benchmark (issue 26): scenario A's first backup, unchanged
backup and restore into a repository on a local S3 server (s3s-fs on 127.0.0.1), dedup against
restic and rustic with their S3 backends; the requests each backup sends (counted from the
server's request log); and N hosts (processes with different --host) backing up into one
repository at once, N = 1, 2, 4, as aggregate throughput.

The source is scenario A's tree (bench/store/run.py's generator) at --scale; the server's data
and the restores live under --work. Tools run in turn within each round (the order rotates), each
in a fresh repository prefix. Prints medians and dedup's ratio to each peer; writes JSON.

  bench/store/s3.py --scale 0.05 --rounds 3
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import generate  # noqa: E402

PASSWORD = "bench-store-password"
KEY, SECRET = "bench", "bench-secret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, root):
        self.root = root
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(os.path.join(root, "bkt"))
        self.port = free_port()
        self.log_path = root + ".log"
        self.log = open(self.log_path, "w")
        env = dict(os.environ, RUST_LOG="s3s::service=debug")
        self.proc = subprocess.Popen(
            ["s3s-fs", "--host", "127.0.0.1", "--port", str(self.port), "--access-key", KEY,
             "--secret-key", SECRET, root], stdout=self.log, stderr=self.log, env=env)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port)).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("s3s-fs did not start")

    def requests(self):
        """Requests logged so far, by method."""
        counts = {}
        with open(self.log_path, errors="replace") as f:
            for line in f:
                at = line.find("req: Request { method: ")
                if at >= 0:
                    method = line[at + 23:].split(",")[0]
                    counts[method] = counts.get(method, 0) + 1
        return counts

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)
        os.remove(self.log_path)


class Tool:
    def __init__(self, name, server, prefix, work, dedup):
        self.name, self.server, self.prefix, self.work, self.dedup = name, server, prefix, work, dedup
        self.endpoint = f"http://127.0.0.1:{server.port}"
        self.conf = os.path.join(work, "conf-" + prefix)
        os.makedirs(self.conf, exist_ok=True)
        if name == "rustic":
            with open(os.path.join(self.conf, "s3.toml"), "w") as f:
                f.write(f'[repository]\nrepository = "opendal:s3"\npassword = "{PASSWORD}"\n'
                        f'[repository.options]\nbucket = "bkt"\nroot = "/{prefix}"\n'
                        f'endpoint = "{self.endpoint}"\nregion = "us-east-1"\n'
                        f'access_key_id = "{KEY}"\nsecret_access_key = "{SECRET}"\n')

    def env(self):
        return dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
                    AWS_DEFAULT_REGION="us-east-1", DEDUP_PASSWORD=PASSWORD,
                    RESTIC_PASSWORD=PASSWORD, XDG_CACHE_HOME=os.path.join(self.conf, "cache"),
                    RESTIC_CACHE_DIR=os.path.join(self.conf, "cache", "restic"))

    def argv(self, step, path=None, target=None, host=None):
        repo = f"s3:{self.endpoint}/bkt/{self.prefix}"
        if self.name == "dedup":
            base = [self.dedup, "store", "-q", "-r", repo]
            return base + {"init": ["init"],
                           "backup": ["backup"] + (["--host", host] if host else []) + [path],
                           "restore": ["restore", "latest", "--target", target]}[step]
        if self.name == "restic":
            base = ["restic", "-q", "-r", repo]
            return base + {"init": ["init"],
                           "backup": ["backup"] + (["--host", host] if host else []) + [path],
                           "restore": ["restore", "latest", "--target", target]}[step]
        base = ["rustic", "-P", os.path.join(self.conf, "s3")]
        return base + {"init": ["init"],
                       "backup": ["backup"] + (["--host", host] if host else []) + [path],
                       "restore": ["restore", "latest", target]}[step]

    def run(self, step, **kw):
        start = time.monotonic()
        subprocess.run(self.argv(step, **kw), env=self.env(), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return time.monotonic() - start


def tree_bytes(path):
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, fs in os.walk(path) for f in fs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.05)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default="dedup,restic,rustic")
    ap.add_argument("--hosts", default="1,2,4")
    ap.add_argument("--work", default="/work/tmp-bench-s3")
    ap.add_argument("--src", default="/dev/shm/bench-s3-src")
    ap.add_argument("--dedup", default="target/x86_64-unknown-linux-gnu/release/dedup")
    ap.add_argument("--json", default="bench/results/store-s3.json")
    a = ap.parse_args()
    a.dedup = os.path.abspath(a.dedup)
    os.makedirs(a.work, exist_ok=True)
    generate(a.src, a.scale, 1)
    size = tree_bytes(a.src)
    tools = a.tools.split(",")
    server = Server(os.path.join(a.work, "server"))
    results = {t: {"first": [], "unchanged": [], "restore": [], "requests": {}} for t in tools}
    try:
        for rnd in range(a.rounds):
            for i in range(len(tools)):
                name = tools[(rnd + i) % len(tools)]
                tool = Tool(name, server, f"{name}-{rnd}", a.work, a.dedup)
                tool.run("init")
                before = server.requests()
                results[name]["first"].append(tool.run("backup", path=a.src))
                mid = server.requests()
                results[name]["unchanged"].append(tool.run("backup", path=a.src))
                after = server.requests()
                if rnd == 0:
                    results[name]["requests"] = {
                        "first": {k: mid.get(k, 0) - before.get(k, 0) for k in mid},
                        "unchanged": {k: after.get(k, 0) - mid.get(k, 0) for k in after}}
                target = os.path.join(a.work, "restore")
                shutil.rmtree(target, ignore_errors=True)
                results[name]["restore"].append(tool.run("restore", target=target))
                shutil.rmtree(target, ignore_errors=True)
                print(f"round {rnd} {name}: " + ", ".join(
                    f"{s} {results[name][s][-1]:.2f} s" for s in ("first", "unchanged", "restore")),
                    flush=True)
        hosts = {}
        for n in [int(x) for x in a.hosts.split(",")]:
            for name in tools:
                tool = Tool(name, server, f"{name}-hosts{n}", a.work, a.dedup)
                tool.run("init")
                srcs = []
                for h in range(n):
                    # Each host its own copy: shared data, different paths and inodes.
                    src = f"{a.src}-host{h}"
                    if not os.path.isdir(src):
                        shutil.copytree(a.src, src, symlinks=True)
                    srcs.append(src)
                start = time.monotonic()
                procs = [subprocess.Popen(tool.argv("backup", path=s, host=f"host{h}"),
                                          env=tool.env(), stdout=subprocess.DEVNULL)
                         for h, s in enumerate(srcs)]
                for p in procs:
                    if p.wait() != 0:
                        raise SystemExit(f"{name} with {n} hosts failed")
                wall = time.monotonic() - start
                hosts.setdefault(name, {})[n] = {"wall_s": wall, "MB_per_s": n * size / wall / 1e6}
                print(f"{n} hosts {name}: {wall:.2f} s, {n * size / wall / 1e6:.0f} MB/s aggregate",
                      flush=True)
    finally:
        server.stop()
    print(f"\nsource {size / 1e6:.0f} MB, medians of {a.rounds} rounds (s3s-fs on 127.0.0.1)")
    print(f"{'tool':8} {'first':>8} {'unchanged':>10} {'restore':>8}  requests first / unchanged")
    for name in tools:
        r = results[name]
        med = {s: statistics.median(r[s]) for s in ("first", "unchanged", "restore")}
        r["median"] = med
        req = r["requests"]
        print(f"{name:8} {med['first']:8.2f} {med['unchanged']:10.2f} {med['restore']:8.2f}  "
              f"{sum(req['first'].values())} / {sum(req['unchanged'].values())}  {req}")
    if "dedup" in results:
        for name in tools:
            if name != "dedup":
                ratios = {s: results["dedup"]["median"][s] / results[name]["median"][s]
                          for s in ("first", "unchanged", "restore")}
                print(f"dedup / {name}: " + ", ".join(f"{s} {v:.2f}x" for s, v in ratios.items()))
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"scale": a.scale, "bytes": size, "tools": results, "hosts": hosts}, f, indent=1)


if __name__ == "__main__":
    main()
