#!/usr/bin/env python3
"""Request time by kind from a trace of fuse_request_send and fuse_request_end (stdin): each
request's time from its send to its end, summed, mean and p50 per opcode, and the sum's share of
the traced span (first send to last end). Used by trace_requests.sh under TIMES=1.
usage: request_times.py < TRACE"""
import re
import statistics
import sys

SEND = re.compile(r"\s(\d+\.\d+): fuse_request_send: connection \d+ req (\d+) opcode \d+ \((\w+)\)")
END = re.compile(r"\s(\d+\.\d+): fuse_request_end: connection \d+ req (\d+) ")

sent, times, first, last = {}, {}, None, None
for line in sys.stdin:
    m = SEND.search(line)
    if m:
        at, req, op = float(m.group(1)), m.group(2), m.group(3).removeprefix("FUSE_")
        sent[req] = (at, op)
        first = at if first is None else first
        continue
    m = END.search(line)
    if m and m.group(2) in sent:
        at, (start, op) = float(m.group(1)), sent.pop(m.group(2))
        times.setdefault(op, []).append(at - start)
        last = at
if not times:
    sys.exit("no request both sent and ended in the trace")
span = last - first
total = sum(sum(t) for t in times.values())
print(f"traced span {span:.2f} s; request time {total:.2f} s ({100 * total / span:.0f} % of it)")
print(f"{'kind':<12}{'count':>8}{'total s':>10}{'% span':>8}{'mean us':>10}{'p50 us':>9}{'p99 us':>9}")
for op, t in sorted(times.items(), key=lambda kv: -sum(kv[1])):
    t.sort()
    p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
    print(f"{op:<12}{len(t):>8}{sum(t):>10.3f}{100 * sum(t) / span:>8.1f}"
          f"{1e6 * statistics.mean(t):>10.0f}{1e6 * statistics.median(t):>9.0f}{1e6 * p99:>9.0f}")
