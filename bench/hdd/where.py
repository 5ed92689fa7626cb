#!/usr/bin/env python3
"""Where one command's requests landed on the modeled disk, from hdd-model's request log.

    python3 bench/hdd/where.py LOG MARK_FROM MARK_TO

MARK_FROM and MARK_TO are the marks `hdd.sh run` printed around the command (`marks A B`).
Prints a markdown table: requests by how far they landed from where the previous one left the
head (answered from the drive's cache, contiguous, forward or back within a track, or a seek of
some distance), with the model's time for each, then the most common request sizes.
"""

import argparse
import collections
import sys

KINDS = ("cache hit", "contiguous", "forward within a track", "back within a track",
         "seek < 16 MB", "seek 16-256 MB", "seek >= 256 MB", "first")


def track_bytes(model_line):
    values = dict(pair.split("=", 1) for pair in model_line.split()[2:] if "=" in pair)
    return float(values.get("rate-mbs", 170)) * 1e6 * 60 / float(values.get("rpm", 7200))


def kind(distance, track):
    if distance == 0:
        return "contiguous"
    if 0 < distance < track:
        return "forward within a track"
    if -track < distance < 0:
        return "back within a track"
    if abs(distance) < 16e6:
        return "seek < 16 MB"
    if abs(distance) < 256e6:
        return "seek 16-256 MB"
    return "seek >= 256 MB"


def summarize(lines, mark_from, mark_to):
    track = 1.4e6
    inside = False
    head = None
    count = collections.Counter()
    seconds = collections.Counter()
    sizes = collections.Counter()
    for line in lines:
        if line.startswith("# model "):
            track = track_bytes(line)
        elif line.startswith("# mark "):
            mark = int(line.split()[2])
            if mark == mark_from:
                inside = True
            elif mark == mark_to:
                return count, seconds, sizes
        if line.startswith("#") or not inside:
            continue
        fields = line.split()
        offset, length = int(fields[2]), int(fields[3])
        cost = (float(fields[4]) + float(fields[5]) + float(fields[6])) / 1e6
        cached = len(fields) > 9 and fields[9] == "1"
        if cached:
            k = "cache hit"
        elif head is None:
            k = "first"
        else:
            k = kind(offset - head, track)
        if not cached:
            head = offset + length
        count[k] += 1
        seconds[k] += cost
        sizes[length] += 1
    raise SystemExit(f"where.py: no '# mark {mark_to}' after '# mark {mark_from}'")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("mark_from", type=int)
    parser.add_argument("mark_to", type=int)
    args = parser.parse_args()
    with open(args.log) as lines:
        count, seconds, sizes = summarize(lines, args.mark_from, args.mark_to)
    print("| where the request landed | requests | model s |")
    print("|---|---|---|")
    for k in KINDS:
        if count[k]:
            print(f"| {k} | {count[k]} | {seconds[k]:.1f} |")
    print(f"| **all** | {sum(count.values())} | {sum(seconds.values()):.1f} |")
    print()
    print("request sizes (bytes x requests): "
          + ", ".join(f"{size} x {n}" for size, n in sizes.most_common(8)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
