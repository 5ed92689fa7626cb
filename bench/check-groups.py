#!/usr/bin/env python3
"""Check that every tool finds the same duplicate groups on a tree.

    python3 bench/check-groups.py ROOT [--expected ROOT.expected] [--reference] [--tools a,b,...]
                                       [--dedup BIN] [--json OUT] [--keep DIR]

Runs each tool of bench/peers.conf once on ROOT (same flags as the timed runs, but the report goes to a
file), parses its report, and compares the groups.

How groups are compared. Tools treat hard links differently: jdupes, fdupes and rdfind list one name
per inode, fclones and dedup list every name of every member inode, and rmlint also reports a lone
inode with several names as a "duplicate" group. So every reported path is mapped to its inode
(st_dev, st_ino from lstat, so a tool that followed a symlink shows up as an extra inode), each group
becomes the set of its distinct inodes, groups with fewer than two inodes are dropped (hard-link-only
sets), and the resulting sets of inode sets must be equal. The number of names listed is shown
separately so that the hard-link policy of each tool stays visible.

The baseline is, in order of preference: the generator's expected groups (--expected, default
ROOT.expected if it exists), the built-in reference finder (--reference: walks ROOT without following
symlinks, including hidden files, skips empty files, groups by size then SHA-256 of the content), or
the first tool. Exit status 1 if any tool differs from the baseline or failed.
"""

import argparse
import collections
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

import benchlib


def reference_groups(root):
    """Independent ground truth: size, then SHA-256 of the whole content; every name listed."""
    by_size = collections.defaultdict(lambda: collections.defaultdict(list))  # size -> inode -> names
    for dirpath, dirnames, filenames in os.walk(os.fsencode(root), followlinks=False):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                by_size[st.st_size][(st.st_dev, st.st_ino)].append(p)
    groups = []
    for size, inodes in by_size.items():
        if len(inodes) < 2:
            continue
        by_digest = collections.defaultdict(list)
        for ino, names in inodes.items():
            h = hashlib.sha256()
            with open(names[0], "rb") as f:
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    h.update(b)
            by_digest[h.digest()].append(names)
        for members in by_digest.values():
            if len(members) >= 2:
                groups.append([n for names in members for n in names])
    return groups


def normalise(groups):
    """-> (set of frozensets of inodes, stats dict, inode -> a path, names listed in kept groups)"""
    norm = set()
    kept_names = set()
    names = {}
    st = collections.Counter()
    seen_in = {}
    for g in groups:
        st["groups_reported"] += 1
        inodes = set()
        for p in g:
            st["paths"] += 1
            try:
                s = os.lstat(p)
            except OSError:
                st["missing_paths"] += 1
                continue
            if not stat.S_ISREG(s.st_mode):
                st["not_regular"] += 1
            key = (s.st_dev, s.st_ino)
            inodes.add(key)
            names.setdefault(key, p)
        if len(inodes) < 2:
            st["hardlink_only_groups"] += 1
            continue
        kept_names.update(os.path.normpath(p) for p in g)
        fs = frozenset(inodes)
        for i in fs:
            if i in seen_in and seen_in[i] != fs:
                st["inode_in_two_groups"] += 1
            seen_in[i] = fs
        norm.add(fs)
    st["groups"] = len(norm)
    st["inodes"] = sum(len(g) for g in norm)
    return norm, st, names, kept_names


def run_tool(tool, root, dedup, workdir):
    out = os.path.join(workdir, tool.name + ".out")
    cmd = tool.command(root, dedup=dedup, out=out)
    t0 = time.monotonic()
    with open(os.path.join(workdir, tool.name + ".stdout"), "wb") as so, \
            open(os.path.join(workdir, tool.name + ".stderr"), "wb") as se:
        rc = subprocess.call(cmd, shell=True, stdout=so, stderr=se, cwd=workdir)
    secs = time.monotonic() - t0
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        sys.exit(f"check-groups: /dev/null is no longer a character device after {tool.name}")
    report = out if tool.writes_file else os.path.join(workdir, tool.name + ".stdout")
    data = open(report, "rb").read() if os.path.exists(report) else b""
    return cmd, rc, secs, benchlib.PARSERS[tool.fmt](data)


def describe(group, names, limit=4):
    paths = sorted(os.fsdecode(names.get(i, b"?")) for i in group)
    more = f" (+{len(paths) - limit})" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--expected", help="expected groups (fdupes format, paths relative to ROOT)")
    ap.add_argument("--reference", action="store_true", help="also run the built-in SHA-256 reference finder")
    ap.add_argument("--tools", default=os.environ.get("TOOLS", ""), help="comma-separated subset of peers.conf")
    ap.add_argument("--conf", default=benchlib.DEFAULT_CONF)
    ap.add_argument("--dedup", default=benchlib.DEFAULT_DEDUP)
    ap.add_argument("--json", help="write the comparison as JSON to this file")
    ap.add_argument("--keep", help="keep the tools' raw reports in this directory")
    a = ap.parse_args()

    root = os.path.abspath(a.root).rstrip("/") or "/"
    if os.sep in a.dedup:
        a.dedup = os.path.abspath(a.dedup)
    tools = benchlib.select_tools(benchlib.load_tools(a.conf), a.tools)
    expected = a.expected
    if expected is None and os.path.exists(root + ".expected"):
        expected = root + ".expected"

    results = []  # (name, kind, cmd, rc, secs, norm, stats, names, kept_names)
    if expected:
        with open(expected, "rb") as f:
            groups = benchlib.parse_fdupes(f.read())
        rootb = os.fsencode(root)
        groups = [[os.path.join(rootb, p) for p in g] for g in groups]
        results.append(("expected", "generator", expected, 0, 0.0) + normalise(groups))
    if a.reference:
        t0 = time.monotonic()
        groups = reference_groups(root)
        results.append(("reference", "sha256", "built-in", 0, time.monotonic() - t0) + normalise(groups))

    workdir = a.keep or tempfile.mkdtemp(prefix="check-groups.")
    os.makedirs(workdir, exist_ok=True)
    try:
        for tool in tools:
            cmd, rc, secs, groups = run_tool(tool, root, a.dedup, workdir)
            results.append((tool.name, tool.kind, cmd, rc, secs) + normalise(groups))
            print(f"check-groups: {tool.name}: exit {rc}, {secs:.1f}s, {len(groups)} groups", file=sys.stderr)
    finally:
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    base = results[0]
    base_norm = base[5]
    base_names = base[8] if base[0] in ("expected", "reference") else None
    all_names = {}
    for r in results:
        for k, v in r[7].items():
            all_names.setdefault(k, v)
    ok = True
    rows = []
    print(f"\nGroups on {root} (baseline: {base[0]}); groups = sets of >= 2 distinct inodes\n")
    print("| tool | exit | groups | inodes in groups | names listed | hard-link-only groups dropped | "
          "missing vs baseline | extra vs baseline | same | every name² |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for name, kind, cmd, rc, secs, norm, st, names, kept in results:
        if base_names is None:
            every = "-"
        else:
            lacking = len(base_names - kept)
            every = "yes" if not lacking else f"no ({lacking} missing)"
        missing = base_norm - norm
        extra = norm - base_norm
        same = not missing and not extra and rc == 0 and not st["missing_paths"] and not st["not_regular"] \
            and not st["inode_in_two_groups"]
        ok &= same
        notes = []
        for k in ("missing_paths", "not_regular", "inode_in_two_groups"):
            if st[k]:
                notes.append(f"{k}={st[k]}")
        print(f"| {name} | {rc} | {st['groups']} | {st['inodes']} | {st['paths']} | {st['hardlink_only_groups']} | "
              f"{len(missing)} | {len(extra)} | {'yes' if same else 'NO ' + ' '.join(notes)} | {every} |")
        rows.append({"tool": name, "kind": kind, "command": cmd, "exit": rc, "seconds": round(secs, 2),
                     "groups": st["groups"], "inodes": st["inodes"], "paths": st["paths"],
                     "groups_reported": st["groups_reported"], "hardlink_only_groups": st["hardlink_only_groups"],
                     "missing_paths": st["missing_paths"], "not_regular": st["not_regular"],
                     "inode_in_two_groups": st["inode_in_two_groups"],
                     "missing_vs_baseline": len(missing), "extra_vs_baseline": len(extra), "same": same,
                     "every_name": every,
                     "examples_missing": [describe(g, all_names) for g in list(missing)[:3]],
                     "examples_extra": [describe(g, all_names) for g in list(extra)[:3]]})
    for r in rows:
        for k in ("examples_missing", "examples_extra"):
            for e in r[k]:
                print(f"  {r['tool']}: {k[9:]}: {e}")
    if base_names is not None:
        print("\n² every name of every member inode listed, as the baseline does (dedup's contract; "
              "informational for the peers, whose hard-link policies differ)")
    print("\nall tools agree" if ok else "\nDIFFERENCES FOUND")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"root": root, "baseline": base[0], "all_same": ok, "tools": rows}, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
