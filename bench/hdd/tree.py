#!/usr/bin/env python3
"""A home-directory-like tree of the shape of fclones' published HDD benchmark.

    python3 bench/hdd/tree.py OUTDIR [--scale F] [--seed S] [--dry-run]

fclones' README (HDD benchmark: Seagate Momentus 7,200 rpm) ran the finders on "51370 paths, 2 GB
data, 6811 (471 MB) duplicate files". At --scale 1 this writes 51,370 regular files, 2.0e9 bytes,
of which 6,811 files (471e6 bytes) are redundant copies; --scale multiplies files and bytes.

Shape: source and configuration trees (many small files), documents, a photo library, music,
caches and downloads, each kind with its own log-normal size distribution; the redundant copies
are whole folders copied elsewhere (a backup of some albums and projects) and single files saved
twice (downloads, attachments). Same-size files with different content arise as they do in a real
home directory, mostly among small files. Files are written in path order, as `cp -a` of the tree
onto a fresh file system would lay them out.

Content: a pseudo-random pool reused from a per-content offset, after a 32-byte per-content header,
so different contents differ in their first bytes; copies are byte-identical. The same arguments
always write the same tree. Writes OUTDIR.manifest.json next to OUTDIR (counts and bytes).
"""

import argparse
import hashlib
import json
import math
import os
import random
import sys

FILES = 51_370
BYTES = 2_000_000_000
REDUNDANT_FILES = 6_811
REDUNDANT_BYTES = 471_000_000
POOL = 8 << 20
HEADER = 32

# kind: (share of the original files, median size, sigma of log(size), files per folder)
KINDS = {
    "src": (0.46, 2_500, 1.3, 40),
    "config": (0.08, 600, 1.2, 12),
    "cache": (0.18, 9_000, 1.6, 60),
    "docs": (0.12, 45_000, 1.4, 18),
    "photos": (0.07, 900_000, 0.5, 45),
    "music": (0.025, 1_800_000, 0.5, 12),
    "downloads": (0.065, 60_000, 2.0, 70),
}
TOP = {
    "src": "projects",
    "config": ".config",
    "cache": ".cache",
    "docs": "Documents",
    "photos": "Pictures",
    "music": "Music",
    "downloads": "Downloads",
}


def plan(scale, seed):
    """Returns ([(relative path, content id, size)], summary)."""
    rng = random.Random(seed)
    n_files = round(FILES * scale)
    n_redundant = round(REDUNDANT_FILES * scale)
    n_originals = n_files - n_redundant
    original_bytes = (BYTES - REDUNDANT_BYTES) * scale

    folders = []  # (kind, path, [(name, content, size)])
    content = 0
    for kind, (share, median, sigma, per_folder) in KINDS.items():
        count = round(n_originals * share)
        made = 0
        index = 0
        while made < count:
            depth = rng.randint(1, 3)
            parts = [TOP[kind]] + [f"{kind}{index:04d}-{d}" for d in range(depth)]
            files = []
            for _ in range(min(count - made, max(1, int(rng.expovariate(1 / per_folder))))):
                size = max(1, int(rng.lognormvariate(math.log(median), sigma)))
                files.append([f"f{made:06d}.{kind[:3]}", content, size])
                content += 1
                made += 1
            folders.append((kind, "/".join(parts), files))
            index += 1
    # Trim or pad to the exact number of originals (rounding per kind).
    everything = [f for _, _, files in folders for f in files]
    while len(everything) > n_originals:
        victim = folders[-1][2].pop()
        everything.remove(victim)
    # Scale sizes to the byte target, large files only: small files keep their sizes (and so
    # their collisions), as in a real tree where the bytes sit in a few large files.
    small = sum(f[2] for f in everything if f[2] < 65_536)
    for _ in range(8):  # the floor at 64 KiB moves the sum: a few rounds converge
        large = sum(f[2] for f in everything if f[2] >= 65_536)
        factor = (original_bytes - small) / large
        for f in everything:
            if f[2] >= 65_536:
                f[2] = max(65_536, int(f[2] * factor))

    entries = [(f"{path}/{name}", c, s) for _, path, files in folders for name, c, s in files]
    # Redundant copies: whole folders (albums, documents, projects) into a backup folder until
    # 85 % of the redundant bytes are there, then single files saved a second time.
    copies = []
    copy_bytes = 0
    candidates = [f for f in folders if f[0] in ("photos", "docs", "src", "music") and f[2]]
    rng.shuffle(candidates)
    for kind, path, files in candidates:
        folder_bytes = sum(s for _, _, s in files)
        if copy_bytes + folder_bytes > 0.85 * REDUNDANT_BYTES * scale:
            continue
        if len(copies) + len(files) > 0.7 * n_redundant:
            continue
        for name, c, s in files:
            copies.append((f"Backup/{path}/{name}", c, s))
        copy_bytes += folder_bytes
    # Each single is drawn from the sizes near the mean still needed, so that the copies reach
    # the redundant bytes and files together.
    by_magnitude = {}
    for entry in entries:
        by_magnitude.setdefault(entry[2].bit_length(), []).append(entry)
    for bucket in by_magnitude.values():
        rng.shuffle(bucket)
    rest = REDUNDANT_BYTES * scale - copy_bytes
    need = n_redundant - len(copies)
    for i in range(need):
        mean = max(rest, 1) / (need - i)
        magnitude = int(mean).bit_length() + rng.choice((-2, -1, 0, 0, 1))
        nearest = min(by_magnitude, key=lambda m: (abs(m - magnitude), m))
        path, c, s = by_magnitude[nearest].pop()
        if not by_magnitude[nearest]:
            del by_magnitude[nearest]
        where = rng.choice(["Downloads/saved", "Documents/attachments", "Desktop"])
        copies.append((f"{where}/{i:05d}-{path.rsplit('/', 1)[-1]}", c, s))
        rest -= s
    entries += copies
    entries.sort()
    summary = {
        "files": len(entries),
        "bytes": sum(s for _, _, s in entries),
        "redundant_files": len(copies),
        "redundant_bytes": sum(s for _, _, s in copies),
        "folders": len({p.rsplit("/", 1)[0] for p, _, _ in entries}),
        "distinct_sizes": len({s for _, _, s in entries}),
        "files_sharing_a_size": sum(
            1 for _, _, s in entries if size_count(entries).get(s, 0) > 1
        ),
        "scale": scale,
        "seed": seed,
    }
    return entries, summary


_counts = {}


def size_count(entries):
    key = id(entries)
    if key not in _counts:
        counts = {}
        for _, _, s in entries:
            counts[s] = counts.get(s, 0) + 1
        _counts[key] = counts
    return _counts[key]


def write(outdir, entries, seed):
    pool = random.Random(seed ^ 0x5EED).randbytes(POOL)
    made = set()
    for path, content, size in entries:
        full = os.path.join(outdir, path)
        parent = os.path.dirname(full)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        header = hashlib.blake2b(f"{seed}:{content}".encode(), digest_size=HEADER).digest()
        start = int.from_bytes(header[:4], "little") % POOL
        with open(full, "wb") as out:
            out.write(header[:size])
            left = size - min(size, HEADER)
            at = start
            while left:
                piece = pool[at : at + min(left, POOL - at)]
                out.write(piece)
                left -= len(piece)
                at = 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dry-run", action="store_true", help="print the summary, write nothing")
    args = parser.parse_args()
    entries, summary = plan(args.scale, args.seed)
    print(json.dumps(summary))
    if args.dry_run:
        return 0
    os.makedirs(args.outdir, exist_ok=True)
    write(args.outdir, entries, args.seed)
    with open(args.outdir.rstrip("/") + ".manifest.json", "w") as out:
        json.dump(summary, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
