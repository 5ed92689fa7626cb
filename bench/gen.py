#!/usr/bin/env python3
"""Deterministic dataset generator for the dedup benchmark (Python 3 standard library only).

    python3 bench/gen.py DATASET OUTDIR [--scale F] [--seed S] [--bytes B] [--force]

DATASET is one of: flat, nested, media, small, adversarial.

--scale F   multiplies file and directory counts (and so the total bytes). 1.0 gives the counts of the
            benchmark issue (48,000 / 31,000 / 18,500 / 1,000,000 files ...).
--bytes B   shrinks large files: the part of every file size above 64 KiB is multiplied by B, so small
            files keep their real sizes and count (per-file cost and request count are unchanged) while
            the total stays within this machine's disk. Each dataset has its own default (see DATASETS),
            chosen so that scale 1 stays under ~10 GB. --bytes 1 gives the full-size distribution.
--seed S    the same (dataset, scale, bytes, seed) always produces byte-identical trees.

Content: a 16 MiB block of seeded pseudo-random bytes (random.Random.randbytes) is generated once and
reused. A regular file's content is a 32-byte header derived from its content id (BLAKE2b), followed
by the block read cyclically from an offset derived from the same id. Files with different content
ids therefore differ in their first bytes; duplicates share a content id and are byte-identical.
The adversarial dataset instead shares the whole file (heads and tails equal) and writes a 16-byte
tag at a position in the middle half of the file; files that should be equal share tag and position.

Next to OUTDIR (never inside it, so that no tool scans them) the generator writes:
    OUTDIR.manifest.json   counts, parameters, and the expected duplicate groups
    OUTDIR.expected        the expected groups in fdupes format: every name of every member inode,
                           paths relative to OUTDIR, groups separated by an empty line
and prints one `manifest:` line at the end.

Every dataset also contains a .gitignore that ignores most of its files, a few hidden files, a hidden
directory, symlinks (to files, to a directory, dangling) and empty files, so that a tool which honours
ignore files, skips hidden files, follows symlinks or groups empty files reports different groups.
"""

import argparse
import collections
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time

GEN_VERSION = 2  # bump when the same arguments would produce a different tree
POOL_SIZE = 16 << 20  # reused pseudo-random block
HEADER = 32  # per-content unique header length
SMALL_LIMIT = 64 << 10  # sizes up to this are never shrunk by --bytes
CHUNK = 4 << 20  # write chunk for large files

DATASETS = {
    # name: (default --bytes, one-line description)
    "flat": (0.3, "48,000 files in 135 flat dirs, 1 KB-3.3 MB (mean ~500 KB before --bytes), "
                  "no duplicates except five hard-linked sets"),
    "nested": (1.0, "31,000 files in 762 nested dirs, 40 B-6.3 MB (mean ~250 KB), "
                    "208 redundant duplicates in 39 sets"),
    "media": (0.16, "18,500 files, 0 B-550 MB (mean ~2.7 MB before --bytes), no duplicates"),
    "small": (0.1, "1,000,000 files 37 B-55 MB, mostly small, in 12,600 dirs, "
                   "many duplicates (copied dirs and scattered copies) and hard links"),
    "adversarial": (1.0, "same-size files with equal heads and tails that differ in the middle "
                         "(3,000 x 1 MiB, 400 x 8 MiB, 24 x 128 MiB), 10% truly equal"),
}


def is_hidden(rel):
    return any(part.startswith(".") for part in rel.split("/"))


def scaled(n, scale, minimum=1):
    return max(minimum, int(round(n * scale)))


class Tree:
    """Writes files and remembers which inodes share content, to produce the expected groups."""

    def __init__(self, name, outdir, seed, scale, bytes_factor, dry_run=False):
        self.dry_run = dry_run  # compute the tree and its manifest without writing anything
        self.name = name
        self.outdir = outdir
        self.seed = seed
        self.scale = scale
        self.bytes_factor = bytes_factor
        self.rng = random.Random(f"dedup-bench:{name}:{seed}")
        pool = random.Random(f"dedup-bench-pool:{seed}").randbytes(POOL_SIZE)
        self.pool2 = memoryview(pool + pool)  # any window of POOL_SIZE bytes without wrapping
        self.dirs = []  # relative paths, "" = root
        self.names = 0  # regular-file names (including hard-link names)
        self.inodes = 0
        self.bytes = 0  # apparent bytes of distinct inodes
        self.empty = 0
        self.hardlink_names = 0
        self.symlinks = 0
        self.hidden = 0
        # content key -> list of inodes, each inode a list of relative names; only size > 0
        self.content = {}
        self.content_size = {}
        self.inode_of = {}  # relative name -> index in its content's inode list (for hard links)
        self.paths = set()  # regular-file names created so far
        self.size_count = collections.Counter()  # size -> number of inodes

    # ---- sizes -------------------------------------------------------------------------------
    def shrink(self, s):
        if s <= SMALL_LIMIT:
            return s
        return SMALL_LIMIT + int((s - SMALL_LIMIT) * self.bytes_factor)

    def lognormal(self, median, sigma, lo, hi):
        r = self.rng
        while True:
            s = int(median * math.exp(r.gauss(0.0, sigma)))
            if lo <= s <= hi:
                return s

    # ---- directories -------------------------------------------------------------------------
    def mkdir(self, rel):
        if not self.dry_run:
            os.makedirs(os.path.join(self.outdir, rel), exist_ok=True)
        self.dirs.append(rel)
        return rel

    def random_tree(self, count, max_depth, names):
        """A random recursive tree of `count` directories below the root (root not counted)."""
        r = self.rng
        depth = {"": 0}
        eligible = [""]
        made = []
        for i in range(count):
            parent = r.choice(eligible)
            base = r.choice(names)
            if parent and i > count // 2 and r.random() < 0.01:
                base = "." + base  # a few hidden directories, mostly deep in the tree
            rel = os.path.join(parent, f"{base}{i}") if parent else f"{base}{i}"
            self.mkdir(rel)
            made.append(rel)
            depth[rel] = depth[parent] + 1
            if depth[rel] < max_depth:
                eligible.append(rel)
        return made

    # ---- files -------------------------------------------------------------------------------
    def _header(self, key):
        return hashlib.blake2b(f"{self.seed}/{self.name}/{key}".encode(), digest_size=HEADER).digest()

    def write(self, rel, size, key):
        """Create a new inode at rel with the content identified by key (same key -> same bytes)."""
        if self.dry_run:
            self._record(rel, size, key)
            return
        path = os.path.join(self.outdir, rel)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            if size > 0:
                h = self._header(key)
                if size <= HEADER:
                    os.write(fd, h[:size])
                else:
                    off = int.from_bytes(h[:8], "little") % POOL_SIZE
                    first = min(size - HEADER, CHUNK)
                    if first + HEADER <= CHUNK:
                        os.write(fd, h + self.pool2[off:off + first])
                        done = first
                        off = (off + first) % POOL_SIZE
                    else:
                        os.write(fd, h)
                        done = 0
                    self._write_pool(fd, off, size - HEADER - done)
        finally:
            os.close(fd)
        self._record(rel, size, key)

    def write_bytes(self, rel, data, key):
        if not self.dry_run:
            with open(os.path.join(self.outdir, rel), "xb") as f:
                f.write(data)
        self._record(rel, len(data), key)

    def _write_pool(self, fd, off, remaining):
        while remaining > 0:
            n = min(remaining, CHUNK, POOL_SIZE)
            mv = self.pool2[off:off + n]
            while mv:
                w = os.write(fd, mv)
                mv = mv[w:]
            remaining -= n
            off = (off + n) % POOL_SIZE

    def write_tagged(self, rel, size, pos, tag_key):
        """Adversarial content: the shared cyclic block, with a 16-byte tag at pos."""
        tag = hashlib.blake2b(f"{self.seed}/{self.name}/tag/{tag_key}".encode(), digest_size=16).digest()
        if self.dry_run:
            self._record(rel, size, ("tag", size, pos, tag_key))
            return
        path = os.path.join(self.outdir, rel)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            self._write_pool(fd, 0, pos)
            os.write(fd, tag)
            self._write_pool(fd, (pos + len(tag)) % POOL_SIZE, size - pos - len(tag))
        finally:
            os.close(fd)
        self._record(rel, size, ("tag", size, pos, tag_key))

    def _record(self, rel, size, key):
        self.paths.add(rel)
        self.size_count[size] += 1
        self.names += 1
        self.inodes += 1
        self.bytes += size
        if is_hidden(rel):
            self.hidden += 1
        if size == 0:
            self.empty += 1
            return
        lst = self.content.setdefault(key, [])
        self.content_size[key] = size
        self.inode_of[rel] = (key, len(lst))
        lst.append([rel])

    def link(self, existing, rel):
        if not self.dry_run:
            os.link(os.path.join(self.outdir, existing), os.path.join(self.outdir, rel))
        self.paths.add(rel)
        self.names += 1
        self.hardlink_names += 1
        if is_hidden(rel):
            self.hidden += 1
        if existing in self.inode_of:
            key, idx = self.inode_of[existing]
            self.content[key][idx].append(rel)
            self.inode_of[rel] = (key, idx)

    def symlink(self, target, rel):
        if not self.dry_run:
            os.symlink(target, os.path.join(self.outdir, rel))
        self.symlinks += 1

    def add_symlinks(self, files, count):
        """Relative symlinks to files, one to a directory, one dangling: no tool should follow them."""
        r = self.rng
        for i in range(count):
            d = r.choice(self.dirs)
            rel = os.path.join(d, f"link{i}") if d else f"link{i}"
            if i == 0 and len(self.dirs) > 1:
                target_dir = r.choice([x for x in self.dirs if x and not rel.startswith(x + "/")] or [""])
                if target_dir:
                    self.symlink(os.path.relpath(os.path.join(self.outdir, target_dir),
                                                 os.path.join(self.outdir, d)), rel)
                    continue
            if i == 1:
                self.symlink("does-not-exist", rel)
                continue
            target = r.choice(files)
            self.symlink(os.path.relpath(os.path.join(self.outdir, target), os.path.join(self.outdir, d)), rel)

    # ---- results -----------------------------------------------------------------------------
    def groups(self):
        out = []
        for key, inodes in self.content.items():
            if len(inodes) >= 2:
                out.append((self.content_size[key], sorted(sorted(i) for i in inodes)))
        out.sort(key=lambda g: (-g[0], g[1][0][0]))
        return out


def filename(r, i, exts, hidden_p=0.01, space_p=0.01):
    stem = r.choice(("data", "report", "img", "notes", "build", "cache", "part", "lib", "doc", "log"))
    ext = r.choice(exts)
    name = f"{stem}_{i:06d}{ext}"
    u = r.random()
    if u < hidden_p:
        name = "." + name
    elif u < hidden_p + space_p:
        name = f"{stem} copy {i}{ext}"
    return name


DIRNAMES = ("src", "docs", "assets", "lib", "test", "build", "data", "misc", "old", "backup", "proj", "share")


def gen_flat(t):
    r = t.rng
    n_files = scaled(48000, t.scale) - t.names  # t.names: the .gitignore
    n_dirs = scaled(135, t.scale, 2)
    hidden_dir = min(7, n_dirs - 1)
    dirs = [t.mkdir(f"dir{d:03d}" if d != hidden_dir else f".hidden{d:03d}") for d in range(n_dirs)]
    n_empty = scaled(5, t.scale)
    # five hard-linked sets: one inode each, 2-4 names (in different dirs)
    n_linksets = 5 if n_files >= 40 else 1
    link_names = [r.randint(1, 3) for _ in range(n_linksets)]
    n_unique = n_files - n_empty - sum(link_names)
    files = []
    for i in range(n_unique):
        d = dirs[i % n_dirs]
        rel = os.path.join(d, filename(r, i, (".dat", ".bin", ".txt", ".pdf", ".jpg")))
        # a tenth of the files come in fixed record sizes, so many files share a size
        if r.random() < 0.1:
            size = t.shrink(r.randint(1, 250) * 4096)
        else:
            size = t.shrink(t.lognormal(340_000, 1.0, 1000, 3_300_000))
        t.write(rel, size, ("u", i))
        files.append(rel)
    for j in range(n_empty):
        rel = os.path.join(dirs[j % n_dirs], f"empty_{j}.txt")
        t.write(rel, 0, ("e", j))
    for s, extra in enumerate(link_names):
        src = files[r.randrange(len(files))]
        for k in range(extra):
            d = dirs[r.randrange(n_dirs)]
            t.link(src, os.path.join(d, f"hardlink_{s}_{k}.dat"))
    t.add_symlinks(files, scaled(10, t.scale, 3))


def dup_set_sizes(r, n_sets, n_redundant):
    """Split n_redundant extra copies over n_sets sets (each >= 1), skewed: a few big sets."""
    extras = [1] * n_sets
    weights = [r.paretovariate(1.3) for _ in range(n_sets)]
    for _ in range(max(0, n_redundant - n_sets)):
        extras[r.choices(range(n_sets), weights)[0]] += 1
    return extras


def gen_nested(t):
    r = t.rng
    n_files = scaled(31000, t.scale) - t.names  # t.names: the .gitignore
    n_dirs = scaled(762, t.scale)
    dirs = [""] + t.random_tree(n_dirs, 10, DIRNAMES)
    n_sets = scaled(39, t.scale)
    n_red = max(n_sets, scaled(208, t.scale))
    extras = dup_set_sizes(r, n_sets, n_red)
    n_empty = scaled(12, t.scale)
    n_unique = n_files - n_empty - sum(extras)
    files = []
    sizes = {}
    for i in range(n_unique):
        d = r.choice(dirs)
        rel = os.path.join(d, filename(r, i, (".c", ".h", ".rs", ".md", ".png", ".o", ".json", "")))
        if r.random() < 0.05:
            size = r.randint(40, 600)  # many tiny files share a size
        else:
            size = t.shrink(t.lognormal(50_000, 2.0, 40, 6_300_000))
        t.write(rel, size, ("u", i))
        files.append(rel)
        sizes[rel] = size
    originals = r.sample(files, n_sets)
    for s, (orig, extra) in enumerate(zip(originals, extras)):
        key = ("u", files.index(orig))
        for k in range(extra):
            d = r.choice(dirs)
            base = os.path.basename(orig) if r.random() < 0.5 else f"copy{s}_{k}_{os.path.basename(orig)}"
            rel = os.path.join(d, base)
            if rel in t.paths:
                rel = os.path.join(d, f"dup{s}_{k}_{os.path.basename(orig)}")
            t.write(rel, sizes[orig], key)
    for j in range(n_empty):
        t.write(os.path.join(r.choice(dirs), f"empty_{j}"), 0, ("e", j))
    t.add_symlinks(files, scaled(20, t.scale, 3))


def gen_media(t):
    r = t.rng
    n_files = scaled(18500, t.scale) - t.names  # t.names: the .gitignore
    dirs = []
    n_dirs = scaled(240, t.scale)
    years = list(range(2008, 2025))
    for i in range(n_dirs):
        y = years[i % len(years)]
        m = 1 + (i // len(years)) % 12
        top = "Photos" if i % 5 else "Videos"
        dirs.append(t.mkdir(f"{top}/{y}/{y}-{m:02d} event {i}"))
    dirs.append(t.mkdir(".thumbnails"))
    files = []
    for i in range(n_files):
        u = r.random()
        d = r.choice(dirs)
        if d == ".thumbnails" or u < 0.10:
            # sidecars, thumbnails and some empty files; many share a size
            if r.random() < 0.01:
                size = 0
            elif r.random() < 0.3:
                size = r.choice((512, 1024, 2048, 4096, 8192))
            else:
                size = t.lognormal(4000, 1.5, 1, 200_000)
            name = f"IMG_{i:05d}.xmp" if d != ".thumbnails" else f"{i:05d}.png"
        elif u < 0.965:
            size = t.shrink(t.lognormal(2_000_000, 0.5, 150_000, 12_000_000))
            name = f"IMG_{i:05d}." + r.choice(("JPG", "JPG", "JPG", "CR2", "HEIC"))
        else:
            size = t.shrink(t.lognormal(10_000_000, 1.2, 3_000_000, 550_000_000))
            name = f"MVI_{i:05d}." + r.choice(("MOV", "MP4"))
        rel = os.path.join(d, name)
        t.write(rel, size, ("u", i))
        if size:
            files.append(rel)
    t.add_symlinks(files, scaled(10, t.scale, 3))


def gen_small(t):
    r = t.rng
    n_files = scaled(1_000_000, t.scale) - t.names  # t.names: the .gitignore
    n_dirs = scaled(12600, t.scale)
    dirs = t.random_tree(n_dirs, 16, DIRNAMES + ("node_modules", "include", "target", "objects"))
    # files per directory: heavy-tailed, summing exactly to n_files
    weights = [r.paretovariate(1.2) for _ in dirs]
    counts = [0] * len(dirs)
    for k in r.choices(range(len(dirs)), weights, k=n_files):
        counts[k] += 1
    exts = (".js", ".ts", ".json", ".md", ".py", ".h", ".c", ".rs", ".o", ".txt", ".png", "")

    def size_sample():
        if r.random() < 0.985:
            return t.lognormal(1200, 1.4, 37, 1_000_000)
        return t.shrink(t.lognormal(100_000, 1.8, 20_000, 55_000_000))

    made = []  # (rel, size, key) of inodes that later files may copy or link
    originals = []  # (dir index, [(name, size, key)]) of directories that a later one may copy
    key_n = 0
    n_empty_target = scaled(100, t.scale)
    empty_every = max(1, n_files // max(1, n_empty_target))
    serial = 0
    for di, d in enumerate(dirs):
        c = counts[di]
        if c == 0:
            continue
        listing = []
        copy_from = None
        if originals and r.random() < 0.08:
            copy_from = r.choice(originals)[1]  # a copied directory (like a vendored dependency)
        for j in range(c):
            serial += 1
            if copy_from is not None and j < len(copy_from):
                name, size, key = copy_from[j]
                rel = os.path.join(d, name)
                t.write(rel, size, key)
                listing.append((name, size, key))
                made.append((rel, size, key))
                continue
            name = filename(r, serial, exts)
            rel = os.path.join(d, name)
            u = r.random()
            if serial % empty_every == 0:
                t.write(rel, 0, ("e", serial))
                continue
            if made and u < 0.04:
                src = made[r.randrange(len(made))][0]
                t.link(src, rel)  # hard link to an earlier file
                continue
            if made and u < 0.07:
                _, size, key = made[r.randrange(len(made))]  # scattered copy of an earlier file
            else:
                size, key = size_sample(), ("u", key_n)
                key_n += 1
            t.write(rel, size, key)
            listing.append((name, size, key))
            made.append((rel, size, key))
        if copy_from is None and 2 <= len(listing) <= 400:
            originals.append((di, listing))
    t.add_symlinks([m[0] for m in made[:10000]], scaled(200, t.scale, 3))


def gen_adversarial(t):
    r = t.rng
    n_dirs = scaled(40, t.scale, 2)
    hidden_dir = min(3, n_dirs - 1)
    dirs = [t.mkdir(f"set{d:02d}" if d != hidden_dir else f".set{d:02d}") for d in range(n_dirs)]
    classes = [(3000, 1 << 20), (400, 8 << 20), (24, 128 << 20)]
    files = []
    serial = 0
    for count, raw_size in classes:
        n = scaled(count, t.scale, 4)
        size = t.shrink(raw_size)
        lo, hi = size // 4, (3 * size) // 4 - 16
        n_equal = max(2, n // 10)  # files that belong to truly-equal sets of 2-4
        i = 0
        while i < n:
            tag = serial
            pos = r.randrange(lo, hi)
            k = r.randint(2, 4) if i < n_equal else 1
            k = min(k, n - i)
            for _ in range(k):
                rel = os.path.join(dirs[serial % n_dirs], f"blob_{size}_{serial:05d}.bin")
                t.write_tagged(rel, size, pos, tag)
                files.append(rel)
                serial += 1
            i += k
    for j in range(scaled(3, t.scale)):
        t.write(os.path.join(dirs[j % n_dirs], f"empty_{j}.bin"), 0, ("e", j))
    t.add_symlinks(files, 3)


IGNORE_FILE = b"# dedup benchmark: every tool must scan ignored files too\n*.o\n*.bin\n*.dat\n*.JPG\n*.js\n*.c\nbuild*/\nnode_modules/\n"

GENERATORS = {
    "flat": gen_flat,
    "nested": gen_nested,
    "media": gen_media,
    "small": gen_small,
    "adversarial": gen_adversarial,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="datasets:\n" + "\n".join(
                                     f"  {k:12} (--bytes {v[0]}) {v[1]}" for k, v in DATASETS.items()))
    ap.add_argument("dataset", choices=sorted(GENERATORS))
    ap.add_argument("outdir")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies file and directory counts (default 1)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("--bytes", type=float, default=None,
                    help="multiplies the part of each size above 64 KiB (default: per dataset)")
    ap.add_argument("--force", action="store_true", help="delete OUTDIR first if it exists")
    ap.add_argument("--dry-run", action="store_true",
                    help="write nothing; print the manifest line the real run would print")
    a = ap.parse_args()
    if a.scale <= 0:
        ap.error("--scale must be > 0")
    bytes_factor = DATASETS[a.dataset][0] if a.bytes is None else a.bytes
    if not 0 < bytes_factor <= 1:
        ap.error("--bytes must be in (0, 1]")
    outdir = os.path.abspath(a.outdir.rstrip("/") or "/")
    if a.dry_run:
        pass
    elif os.path.lexists(outdir):
        if not a.force and (not os.path.isdir(outdir) or os.listdir(outdir)):
            sys.exit(f"gen.py: {outdir} exists and is not empty (use --force to replace it)")
        if a.force and os.path.lexists(outdir):
            if os.path.isdir(outdir) and not os.path.islink(outdir):
                shutil.rmtree(outdir)
            else:
                os.unlink(outdir)
    if not a.dry_run:
        os.makedirs(outdir, exist_ok=True)

    t0 = time.monotonic()
    t = Tree(a.dataset, outdir, a.seed, a.scale, bytes_factor, dry_run=a.dry_run)
    t.dirs.append("")
    # an ignore file that would hide most files from a tool honouring .gitignore (fclones without
    # --no-ignore); it is a regular hidden file with unique content
    t.write_bytes(".gitignore", IGNORE_FILE, ("gitignore",))
    GENERATORS[a.dataset](t)
    groups = t.groups()
    elapsed = time.monotonic() - t0

    dup_files = sum(len(g[1]) for g in groups)  # inodes in groups
    redundant = sum(len(g[1]) - 1 for g in groups)
    redundant_bytes = sum((len(g[1]) - 1) * g[0] for g in groups)
    # inodes whose size another inode shares: a finder must read at least part of each of these
    same_size = sum(c for size, c in t.size_count.items() if size > 0 and c > 1)
    manifest = {
        "gen_version": GEN_VERSION, "dataset": a.dataset, "seed": a.seed, "scale": a.scale,
        "bytes_factor": bytes_factor,
        "outdir": outdir,
        "files": t.names, "inodes": t.inodes, "hardlink_names": t.hardlink_names, "empty_files": t.empty,
        "hidden_files": t.hidden, "symlinks": t.symlinks, "dirs": len(t.dirs) - 1, "bytes": t.bytes,
        "dup_sets": len(groups), "dup_inodes": dup_files, "redundant_files": redundant,
        "redundant_bytes": redundant_bytes, "same_size_inodes": same_size, "seconds": round(elapsed, 1),
        "groups": [{"size": s, "inodes": inodes} for s, inodes in groups],
    }
    if not a.dry_run:
        with open(outdir + ".manifest.json", "w") as f:
            json.dump(manifest, f)
        with open(outdir + ".expected", "w") as f:
            for _, inodes in groups:
                for names in inodes:
                    for n in names:
                        f.write(n + "\n")
                f.write("\n")
    print(f"manifest: dataset={a.dataset} seed={a.seed} scale={a.scale:g} bytes_factor={bytes_factor:g} "
          f"files={t.names} (inodes={t.inodes} hardlink_names={t.hardlink_names} empty={t.empty} "
          f"hidden={t.hidden}) symlinks={t.symlinks} dirs={len(t.dirs) - 1} bytes={t.bytes} "
          f"({t.bytes / 1e9:.2f} GB) expected_dup_sets={len(groups)} dup_inodes={dup_files} "
          f"redundant_files={redundant} redundant_bytes={redundant_bytes} same_size_inodes={same_size} "
          f"seconds={elapsed:.1f}" + (" (dry run: nothing written)" if a.dry_run else ""))


if __name__ == "__main__":
    main()
