#!/usr/bin/env python3
"""Apply "a typical day" of changes to a tree, deterministically (seeded), for the cache benchmark.

    python3 bench/mutate.py TREE --add 5 --modify 5 [--seed 1]

--add P      adds P % as many files as the tree has: half are copies of existing files (new
             duplicates), half new content with the size of an existing file (so they land in
             size classes that are already cached and force a comparison).
--modify P   changes P % of the existing files: half overwrite 4 KiB in the middle in place (same
             size, new mtime and ctime), half append 1 KiB (new size).

Prints one line saying what was done. Python standard library only.
"""

import argparse
import os
import random
import shutil
import sys


def regular_files(tree):
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                out.append(path)
    return out


def new_name(rng, path, tag):
    head, tail = os.path.split(path)
    while True:
        candidate = os.path.join(head, f"{tag}-{rng.randrange(1 << 32):08x}-{tail}")
        if not os.path.exists(candidate):
            return candidate


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--add", type=float, default=5.0)
    ap.add_argument("--modify", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    files = regular_files(args.tree)
    if not files:
        sys.exit(f"mutate.py: no regular files under {args.tree}")
    n_add = round(len(files) * args.add / 100)
    n_modify = round(len(files) * args.modify / 100)
    modified = rng.sample(files, min(n_modify, len(files)))
    sources = [rng.choice(files) for _ in range(n_add)]
    copies = fresh = rewritten = appended = 0
    for i, src in enumerate(sources):
        if i % 2 == 0:
            shutil.copyfile(src, new_name(rng, src, "copy"))
            copies += 1
        else:
            size = os.path.getsize(src)
            with open(new_name(rng, src, "new"), "wb") as f:
                f.write(rng.randbytes(size))
            fresh += 1
    for i, path in enumerate(modified):
        size = os.path.getsize(path)
        if i % 2 == 0 and size > 0:
            with open(path, "r+b") as f:
                f.seek(max(0, size // 2 - 2048))
                f.write(rng.randbytes(min(4096, size)))
            rewritten += 1
        else:
            with open(path, "ab") as f:
                f.write(rng.randbytes(1024))
            appended += 1
    print(
        f"mutate.py: {len(files)} files; added {copies} copies and {fresh} new files of existing "
        f"sizes; modified {rewritten} in place (same size) and {appended} by appending"
    )


if __name__ == "__main__":
    main()
