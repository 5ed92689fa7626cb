#!/usr/bin/env python3
"""Runs several commands cold on the modeled disk, interleaved round after round, and tabulates
each one's wall time with what the model served for it.

    python3 bench/hdd/compare.py [--rounds N] [--json FILE] [--before COMMAND] NAME=COMMAND ...
    python3 bench/hdd/compare.py --table FILE      (the table again, from a --json FILE)

The model must be up (bench/hdd/hdd.sh up). Every run goes through `hdd.sh run` (sync, drop
caches, the command under SCHED_FIFO unless HDD_RUN_RT=0, then the model's totals before and
after), so `{}` in a COMMAND stands for the mounted file system. A COMMAND is split like a shell
word list (shlex); its output is read and dropped. Prints a markdown table of medians: wall time,
requests, seeks, and the model's seek, rotation and transfer time; the ratio column divides each
median wall time by the first command's. The last column counts, per run, how often another
process dropped the page cache while it ran (`hdd.sh run`'s `drops`): such a run reads again what
it had read, and its figures are partly the other process's. `--before COMMAND` (a shell command,
`{}` standing for the mounted file system) runs before each run, outside its time: e.g.
`bench/hdd/hdd.sh refresh`, so that every restore lands on the same empty file system.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ("wall_s", "requests", "reads", "writes", "read_MB", "seeks", "cache_hits", "seek_s",
          "rotation_s", "transfer_s", "busy_s", "late_s")


def parse_run_line(line):
    """`wall_s 1.2 status 0 requests 9 (reads 9, writes 0) ... marks 3 4` -> {name: number},
    with `marks` as [3, 4] (the log's marks around the run)."""
    head, sep, marks = line.partition(" marks ")
    words = head.replace("(", " ").replace(")", " ").replace(",", " ").split()
    values = {"marks": [int(m) for m in marks.split()] if sep else []}
    for name, value in zip(words[::2], words[1::2]):
        try:
            values[name] = float(value)
        except ValueError:
            raise ValueError(f"unexpected hdd.sh run output: {line!r}") from None
    missing = [f for f in FIELDS + ("status",) if f not in values]
    if missing:
        raise ValueError(f"hdd.sh run output lacks {missing}: {line!r}")
    return values


def run_before(command):
    mnt = os.environ.get("HDD_MNT", "/mnt/dedup-hdd")
    subprocess.run(["sh", "-c", command.replace("{}", shlex.quote(mnt))], check=True,
                   stdout=subprocess.DEVNULL)


def run_once(command):
    done = subprocess.run(
        [os.path.join(HERE, "hdd.sh"), "run", *command],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    lines = [l for l in done.stdout.splitlines() if l.startswith("wall_s ")]
    if not lines:
        raise RuntimeError(f"hdd.sh run printed no summary for {command} (status {done.returncode})")
    return parse_run_line(lines[-1])


def table(names, runs):
    first = statistics.median(r["wall_s"] for r in runs[names[0]])
    out = ["| command | wall s (median) | / first | requests | seeks | cache hits | seek s | "
           "rotation s | transfer s | model busy s | wall − busy s | runs (wall s) | "
           "cache drops by others |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        rs = runs[name]
        med = {f: statistics.median(r[f] for r in rs) for f in FIELDS}
        out.append(
            f"| {name} | {med['wall_s']:.1f} | {med['wall_s'] / first:.2f} | {med['requests']:.0f} "
            f"| {med['seeks']:.0f} | {med['cache_hits']:.0f} | {med['seek_s']:.1f} "
            f"| {med['rotation_s']:.1f} "
            f"| {med['transfer_s']:.1f} | {med['busy_s']:.1f} | {med['wall_s'] - med['busy_s']:.1f} "
            f"| {' '.join('%.1f' % r['wall_s'] for r in rs)} "
            f"| {' '.join('%d' % r.get('drops', 0) for r in rs)} |")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="*", metavar="NAME=COMMAND")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write every run's figures here")
    parser.add_argument("--before", metavar="COMMAND",
                        help="a shell command run before each run, outside its time")
    parser.add_argument("--table", metavar="FILE", help="print the table of a --json FILE")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            saved = json.load(f)
        print(table(list(saved["commands"]), saved["runs"]))
        return 0
    if not args.commands:
        parser.error("no NAME=COMMAND given")
    named = []
    for spec in args.commands:
        name, sep, command = spec.partition("=")
        if not sep or not name or not command.strip():
            parser.error(f"expected NAME=COMMAND, got {spec!r}")
        named.append((name, shlex.split(command)))
    names = [n for n, _ in named]
    if len(set(names)) != len(names):
        parser.error("command names must differ")
    runs = {n: [] for n in names}
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    for round_no in range(1, args.rounds + 1):
        for name, command in named:
            if args.before:
                run_before(args.before)
            result = run_once(command)
            runs[name].append(result)
            print(f"round {round_no} {name}: wall {result['wall_s']:.1f} s, busy "
                  f"{result['busy_s']:.1f} s, {result['requests']:.0f} requests, status "
                  f"{result['status']:.0f}", file=sys.stderr, flush=True)
    print(table(names, runs))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"started": started, "rounds": args.rounds,
                       "commands": {n: shlex.join(c) for n, c in named},
                       "before": args.before,
                       "loadavg_end": open("/proc/loadavg").read().split()[:3],
                       "runs": runs}, out, indent=1)
    failed = [n for n in names if any(r["status"] for r in runs[n])]
    if failed:
        print(f"compare.py: non-zero exit status from {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
