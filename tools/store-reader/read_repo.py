#!/usr/bin/env python3
"""An independent reader of a `dedup store` repository, written from docs/store-format.md alone.

It exists to check that the specification is a contract another program can implement: it opens
a local repository with a password, lists its snapshots, and extracts one snapshot into a
directory, verifying every file name and every blob's keyed id on the way. It never writes to the
repository. Section numbers (§n) refer to docs/store-format.md.

Usage:
  read_repo.py REPO list                     (password from DEDUP_PASSWORD)
  read_repo.py REPO extract SNAPSHOT TARGET  (SNAPSHOT: an id prefix or `latest`)
  read_repo.py REPO check-packs              (every pack: name, trailer, and each indexed blob)

Needs the PyPI modules blake3, pynacl, argon2-cffi and zstandard.
"""

import os
import stat
import struct
import sys

import argon2.low_level
import blake3
import nacl.bindings
import nacl.exceptions
import zstandard

MAX_ARGON2_MEMORY_KIB = 2 * 1024 * 1024  # §4: at most 2 GiB
MAX_ARGON2_ITERATIONS = 16
MAX_ARGON2_LANES = 16
MAX_ARGON2_WORK_KIB = 4 * 1024 * 1024  # §4: memory times iterations at most 4 GiB


class FormatError(Exception):
    """The repository does not follow the specification (damage, or a spec/code mismatch)."""


class Reader:
    """Reads the encodings of the conventions paragraph: little-endian integers, `bytes`, `str`."""

    def __init__(self, data, what):
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, n):
        if self.pos + n > len(self.data):
            raise FormatError(f"{self.what}: truncated at byte {self.pos} (wanted {n})")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def u8(self):
        return self.take(1)[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def i32(self):
        return struct.unpack("<i", self.take(4))[0]

    def i64(self):
        return struct.unpack("<q", self.take(8))[0]

    def bytes_(self, limit):
        n = self.u32()
        if n > limit:
            raise FormatError(f"{self.what}: {n} bytes where at most {limit} are allowed")
        return self.take(n)

    def str_(self, limit):
        return self.bytes_(limit).decode("utf-8")

    def varint(self):
        """§10: LEB128, 7 bits a byte, low first; the shortest encoding, at most 64 bits."""
        value, shift = 0, 0
        while True:
            byte = self.u8()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if byte == 0 and shift > 0:
                    raise FormatError(f"{self.what}: varint longer than it needs")
                if value >= 1 << 64:
                    raise FormatError(f"{self.what}: varint beyond 64 bits")
                return value
            shift += 7
            if shift > 63:
                raise FormatError(f"{self.what}: varint beyond 64 bits")

    def delta(self, previous):
        """§10: a zigzag varint difference from `previous`, modulo 2^64."""
        z = self.varint()
        d = (z >> 1) ^ -(z & 1)
        return (previous + d) % (1 << 64)

    def flag(self, what):
        value = self.u8()
        if value > 1:
            raise FormatError(f"{self.what}: {what} is {value}, not 0 or 1")
        return value

    def end(self):
        if self.pos != len(self.data):
            raise FormatError(f"{self.what}: {len(self.data) - self.pos} bytes left over")


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def check_content_name(path, data):
    """§1: a file named <id> is named by the BLAKE3 hash of its bytes as stored."""
    name = os.path.basename(path)
    if blake3.blake3(data).hexdigest() != name:
        raise FormatError(f"{path}: content does not hash to its name")


def listing(directory):
    """The files of a directory, without the leftovers of interrupted writes (names with `.`)."""
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if not n.startswith("."))


# ---------------------------------------------------------------------------------------------
# §2 the sealed box


def open_box(box, key, ad, encrypted, what):
    if len(box) < 40:
        raise FormatError(f"{what}: sealed box shorter than 40 bytes")
    nonce, body, tag = box[:24], box[24:-16], box[-16:]
    if encrypted:
        try:
            return nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(body + tag, ad, nonce, key)
        except nacl.exceptions.CryptoError:
            raise FormatError(f"{what}: sealed box does not open") from None
    if nonce != bytes(24):
        raise FormatError(f"{what}: unencrypted box with a non-zero nonce")
    want = blake3.blake3(struct.pack("<Q", len(ad)) + ad + body, key=key).digest()[:16]
    if want != tag:
        raise FormatError(f"{what}: checksum of unencrypted box does not match")
    return body


def check_header(data, magic, what, encrypted=None, versions=(1,)):
    """§2: the 8-byte header (file version 1; a pack's 1 or 2, §7). Returns (flags_encrypted,
    sub_kind)."""
    if len(data) < 8 or data[:4] != magic:
        raise FormatError(f"{what}: magic is not {magic!r}")
    version, flags, sub_kind, reserved = data[4], data[5], data[6], data[7]
    if version not in versions:
        raise FormatError(f"{what}: file version {version} unknown")
    if flags & ~1 or reserved != 0:
        raise FormatError(f"{what}: reserved header bits set")
    is_encrypted = bool(flags & 1)
    if encrypted is not None and is_encrypted != encrypted:
        raise FormatError(f"{what}: encryption flag differs from the repository's")
    return is_encrypted, sub_kind


def open_headed_file(path, magic, key, encrypted):
    """A file that is a header followed by one sealed box with AD = the header (§8, §9, §13)."""
    data = read_file(path)
    check_header(data, magic, path, encrypted)
    return open_box(data[8:], key, data[:8], encrypted, path)


# ---------------------------------------------------------------------------------------------
# §3, §4 keys


def derive_keys(master):
    def derive(context):
        return blake3.blake3(master, derive_key_context=context).digest()

    return {
        "data": derive("dedup store v1 data encryption"),
        "id": derive("dedup store v1 blob id"),
        "gear": derive("dedup store v1 chunker gear table"),
    }


def read_key_slot(path):
    """§4: the KDF of a key slot (0 none, 1 argon2id) and a function that opens it with a
    password, returning the master key or None."""
    data = read_file(path)
    check_content_name(path, data)
    r = Reader(data, path)
    if r.take(4) != b"DDSK":
        raise FormatError(f"{path}: not a key file")
    version, kdf = r.u8(), r.u8()
    if version != 1:
        raise FormatError(f"{path}: key file version {version} unknown")
    r.take(2)
    m, t, p = r.u32(), r.u32(), r.u32()
    salt = r.take(32)
    r.i64()  # creation time
    r.str_(1024)  # label
    ad = data[: r.pos]
    box = data[r.pos :]
    if len(box) != 72:
        raise FormatError(f"{path}: master key box is {len(box)} bytes, not 72")
    if kdf == 1:
        if not (1 <= t <= MAX_ARGON2_ITERATIONS and 1 <= p <= MAX_ARGON2_LANES
                and 8 * p <= m <= MAX_ARGON2_MEMORY_KIB and m * t <= MAX_ARGON2_WORK_KIB):
            raise FormatError(f"{path}: argon2 parameters out of range")
    elif kdf != 0:
        raise FormatError(f"{path}: KDF {kdf} unknown")

    def unlock(password):
        if kdf == 1:
            wrapping = argon2.low_level.hash_secret_raw(
                password, salt, time_cost=t, memory_cost=m, parallelism=p, hash_len=32,
                type=argon2.low_level.Type.ID, version=0x13,
            )
        else:
            wrapping = bytes(32)
        try:
            return open_box(box, wrapping, ad, True, path)
        except FormatError:
            return None

    return kdf, unlock


def open_repository(repo, password):
    """§4, §13: opens the key slot the rules of §4 allow and reads the config. A slot that takes
    a password is tried with it; the first one it opens must open the config. A slot that takes
    none (KDF 0) is used only when no slot takes a password and the config says unencrypted."""
    config_path = os.path.join(repo, "config")
    config_bytes = read_file(config_path)
    encrypted, _ = check_header(config_bytes, b"DDSC", config_path)
    slots = [read_key_slot(os.path.join(repo, "keys", name))
             for name in listing(os.path.join(repo, "keys"))]
    with_password = [unlock for kdf, unlock in slots if kdf == 1]
    if with_password:
        candidates = [lambda unlock=unlock: unlock(password) for unlock in with_password]
    elif encrypted:
        raise FormatError(f"{config_path}: encrypted, but no key slot takes a password")
    else:
        candidates = [lambda unlock=unlock: unlock(b"") for _, unlock in slots]
    master = next((m for m in (c() for c in candidates) if m is not None), None)
    if master is None:
        raise FormatError("wrong password (no key slot opens)")
    keys = derive_keys(master)
    # The first slot that opens decides: a config it does not open was replaced or is damaged.
    plain = open_box(config_bytes[8:], keys["data"], config_bytes[:8], encrypted, config_path)
    r = Reader(plain, config_path)
    config = {"version": r.u8()}
    if config["version"] not in (1, 2, 3, 4):
        raise FormatError(f"{config_path}: repository format version {config['version']} unknown")
    config["id"] = r.take(32).hex()
    config["created"] = r.i64()
    config["chunker"] = (r.u8(), r.u32(), r.u32(), r.u32())
    # §13: kind 3 from version 2 on, kind 4 in version 4
    kinds = {1: (1, 2), 2: (1, 2, 3), 3: (1, 2, 3), 4: (1, 2, 3, 4)}[config["version"]]
    if config["chunker"][0] not in kinds:
        raise FormatError(f"{config_path}: chunker kind {config['chunker'][0]} unknown in version {config['version']}")
    config["pack_size"] = r.u32()
    config["compression"] = (r.u8(), r.i32())
    r.end()
    return Repository(repo, keys, encrypted, config)


# ---------------------------------------------------------------------------------------------
# §6, §7, §8 blobs, packs and the index


def bucket(length):
    """§7: 65,536 up to that, else rounded up to a multiple of 2^(floor(log2 L) - 5)."""
    if length <= 65536:
        return 65536
    step = 1 << (length.bit_length() - 1 - 5)
    return -(-length // step) * step


def padded_length(length):
    """§7: the length of a padded pack whose content (all but the padding) is `length` bytes."""
    padded = bucket(length)
    if 0 < padded - length < 40:
        return bucket(padded + 1)
    return padded


def read_locations(r):
    """count × { id, compression, offset, stored_len, raw_len } (§7 trailer, §8 index)."""
    out = []
    for _ in range(r.u32()):
        out.append((r.take(32), r.u8(), r.u32(), r.u32(), r.u32()))
    return out


class Repository:
    def __init__(self, path, keys, encrypted, config):
        self.path = path
        self.keys = keys
        self.encrypted = encrypted
        self.config = config
        self.index = {}  # blob id -> (pack id hex, kind, compression, offset, stored_len, raw_len)
        self.blobs_checked = 0
        self._load_index()

    def _open_named(self, folder, name, magic, what, versions=(1,)):
        """A content-named file of `folder`, checked against its name, opened, its version one of
        `versions` (returned with the reader)."""
        path = os.path.join(self.path, folder, name)
        check_content_name(path, read_file(path))
        r = Reader(open_headed_file(path, magic, self.keys["data"], self.encrypted), path)
        version = r.u8()
        if version not in versions:
            raise FormatError(f"{path}: {what} version {version} unknown")
        return path, r, version

    def _load_index(self):
        files = {}
        for name in listing(os.path.join(self.path, "index")):
            path, r, _ = self._open_named("index", name, b"DDSI", "index")
            supersedes = [r.take(32).hex() for _ in range(r.u32())]
            packs = []
            for _ in range(r.u32()):
                pack_id, kind = r.take(32).hex(), r.u8()
                packs.append((pack_id, kind, read_locations(r)))
            r.end()
            files[name] = (supersedes, packs)
        superseded = {s for sup, _ in files.values() for s in sup if s in files}
        for name, (_, packs) in files.items():
            if name in superseded:
                continue
            for pack_id, kind, entries in packs:
                if not os.path.exists(self.pack_path(pack_id)):
                    continue  # §8: any listed location whose pack exists is valid
                for blob_id, compression, offset, stored_len, raw_len in entries:
                    self.index.setdefault(
                        blob_id, (pack_id, kind, compression, offset, stored_len, raw_len)
                    )

    def pack_path(self, pack_id):
        return os.path.join(self.path, "data", pack_id[:2], pack_id)

    def check_pack(self, pack_id):
        """§7: the pack hashes to its name and its trailer lists what the index says; a pack of
        version 2 has a padding box of zeros and, in an encrypted repository, a bucket's length."""
        path = self.pack_path(pack_id)
        data = read_file(path)
        check_content_name(path, data)
        _, sub_kind = check_header(data, b"DDSP", path, self.encrypted, versions=(1, 2))
        if data[-4:] != b"DDPT":
            raise FormatError(f"{path}: tail magic is not DDPT")
        if data[4] == 1:
            # version 1: the trailer box's length in clear before the magic
            trailer_len, padding_len, tail = struct.unpack("<I", data[-8:-4])[0], 0, 8
        else:
            # version 2: a 48-byte lengths box before the magic, then the padding box before it
            if len(data) < 8 + 52:
                raise FormatError(f"{path}: shorter than a pack of version 2")
            lengths = open_box(data[-52:-4], self.keys["data"], data[:8] + b"pack tail", self.encrypted, path)
            if len(lengths) != 8:
                raise FormatError(f"{path}: lengths box of {len(lengths)} bytes, not 8")
            trailer_len, padding_len = struct.unpack("<II", lengths)
            tail = 52
            if padding_len:
                if padding_len < 40:
                    raise FormatError(f"{path}: padding of {padding_len} bytes, shorter than a box")
                padding = open_box(data[len(data) - tail - padding_len : len(data) - tail],
                                   self.keys["data"], data[:8] + b"padding", self.encrypted, path)
                if padding.count(0) != len(padding):
                    raise FormatError(f"{path}: padding is not all zero")
            if self.encrypted and len(data) != padded_length(len(data) - padding_len):
                raise FormatError(f"{path}: {len(data)} bytes, not the bucket of its content")
        end = len(data) - tail - padding_len
        start = end - trailer_len
        if trailer_len < 40 or start < 8:
            raise FormatError(f"{path}: trailer length out of range")
        trailer_ad = data[:8] + b"trailer"
        trailer = open_box(data[start:end], self.keys["data"], trailer_ad, self.encrypted, path)
        r = Reader(trailer, path + " trailer")
        if r.u8() != 1:
            raise FormatError(f"{path}: trailer version unknown")
        entries = read_locations(r)
        r.end()
        expected_offset = 8
        for _, _, offset, stored_len, _ in entries:
            if offset != expected_offset:
                raise FormatError(f"{path}: blob boxes not contiguous at {offset}")
            expected_offset += stored_len
        if expected_offset != start:
            raise FormatError(f"{path}: blob boxes end at {expected_offset}, trailer at {start}")
        for blob_id, compression, offset, stored_len, raw_len in entries:
            found = self.index.get(blob_id)
            if found and found[0] == pack_id:
                if found[1:] != (sub_kind, compression, offset, stored_len, raw_len):
                    raise FormatError(f"{path}: trailer and index differ on {blob_id.hex()}")
                self.blob(blob_id, sub_kind)
        return sub_kind, entries

    def blob(self, blob_id, kind):
        """§6: reads, opens, decompresses and verifies one blob."""
        if blob_id not in self.index:
            raise FormatError(f"blob {blob_id.hex()} is in no index")
        pack_id, pack_kind, compression, offset, stored_len, raw_len = self.index[blob_id]
        if pack_kind != kind:
            raise FormatError(f"blob {blob_id.hex()}: in a pack of kind {pack_kind}, wanted {kind}")
        with open(self.pack_path(pack_id), "rb") as f:
            f.seek(offset)
            box = f.read(stored_len)
        ad = blob_id + bytes([kind, compression]) + struct.pack("<I", raw_len)
        what = f"blob {blob_id.hex()} in pack {pack_id}"
        stored = open_box(box, self.keys["data"], ad, self.encrypted, what)
        if compression == 1:
            plain = zstandard.ZstdDecompressor().decompress(stored, max_output_size=raw_len)
        elif compression == 0:
            plain = stored
        else:
            raise FormatError(f"{what}: compression {compression} unknown")
        if len(plain) != raw_len:
            raise FormatError(f"{what}: {len(plain)} bytes, raw_len says {raw_len}")
        if blake3.blake3(plain, key=self.keys["id"]).digest() != blob_id:
            raise FormatError(f"{what}: keyed id does not match the content")
        self.blobs_checked += 1
        return plain

    # -----------------------------------------------------------------------------------------
    # §9 snapshots

    def snapshots(self):
        out = []
        for name in listing(os.path.join(self.path, "snapshots")):
            path, r, version = self._open_named("snapshots", name, b"DDSS", "snapshot", (1, 2, 3, 4))
            s = {"id": name, "time": r.i64(), "tree": r.take(32)}
            # §9: versions 2 and 4 name the root status tree, valid in format version 3 only;
            # versions 3 and 4 end with the original snapshot's id.
            with_status = version in (2, 4)
            if with_status and self.config["version"] < 3:
                raise FormatError(f"{path}: snapshot version {version} in a format version {self.config['version']} repository")
            s["status_tree"] = r.take(32) if with_status else None
            s["parent"] = r.take(32).hex() if r.flag("has_parent") else None
            s["host"], s["user"] = r.str_(4096), r.str_(4096)
            s["paths"] = [r.bytes_(65536) for _ in range(r.u32())]
            s["tags"] = [r.str_(4096) for _ in range(r.u32())]
            s["flags"] = r.flag("flags")
            s["summary"] = [r.u64() for _ in range(10)]
            s["program"] = r.str_(4096)
            s["original"] = r.take(32).hex() if version >= 3 else None
            r.end()
            out.append(s)
        out.sort(key=lambda s: (s["time"], s["id"]))
        return out

    def find_snapshot(self, wanted):
        snaps = self.snapshots()
        if wanted == "latest":
            if not snaps:
                raise FormatError("no snapshot")
            return snaps[-1]
        found = [s for s in snaps if s["id"].startswith(wanted)]
        if len(found) != 1:
            raise FormatError(f"snapshot {wanted}: {len(found)} matches")
        return found[0]

    # -----------------------------------------------------------------------------------------
    # §10 trees

    def tree(self, tree_id):
        r = Reader(self.blob(tree_id, 1), f"tree {tree_id.hex()}")
        version = r.u8()
        if version not in (1, 2):
            raise FormatError(f"tree {tree_id.hex()}: version {version} unknown")
        entries = []
        previous = None
        for _ in range(r.u32()):
            e = {"name": r.bytes_(255)}
            name = e["name"]
            if not 1 <= len(name) <= 255 or b"/" in name or b"\0" in name or name in (b".", b".."):
                raise FormatError(f"tree {tree_id.hex()}: unsafe name {name!r}")
            if previous is not None and name <= previous:
                raise FormatError(f"tree {tree_id.hex()}: names out of order")
            previous = name
            e["kind"], flags = r.u8(), r.u8()
            # bit 0: incomplete; bit 1 (version 2, files only): a link group follows
            linked = bool(flags & 2)
            if flags & ~(3 if version == 2 else 1) or (linked and e["kind"] != 1):
                raise FormatError(f"tree {tree_id.hex()}: entry flags {flags}")
            e["flags"] = flags & 1
            e["mode"], e["uid"], e["gid"] = r.u32(), r.u32(), r.u32()
            if e["mode"] > 0o7777:
                raise FormatError(f"tree {tree_id.hex()}: mode {e['mode']:o}")
            e["size"] = r.u64()
            # §10: version 2 keeps the atime in the status tree; until then the mtime stands in
            e["atime"] = r.i64() if version == 1 else None
            e["mtime"] = r.i64()
            if e["atime"] is None:
                e["atime"] = e["mtime"]
            e["dev"], e["ino"], e["nlink"] = 0, 0, 1
            if version == 1:
                e["ctime"] = r.i64()
            if version == 1 or linked:
                e["dev"], e["ino"], e["nlink"] = r.u64(), r.u64(), r.u64()
                if version == 2 and e["nlink"] < 2:
                    raise FormatError(f"tree {tree_id.hex()}: a link group of {e['nlink']} links")
            e["rdev"] = r.u64()
            e["target"] = r.bytes_(65536)
            xattrs = []
            for _ in range(r.u32()):
                xattrs.append((r.bytes_(255), r.bytes_(65536)))
            names = [n for n, _ in xattrs]
            if names != sorted(set(names)) or b"" in names:
                raise FormatError(f"tree {tree_id.hex()}: xattrs out of order, repeated or unnamed")
            e["xattrs"] = xattrs
            if e["kind"] == 1:
                e["chunks"] = [r.take(32) for _ in range(r.u32())]
            elif e["kind"] == 2:
                e["subtree"] = r.take(32)
            elif not 3 <= e["kind"] <= 7:
                raise FormatError(f"tree {tree_id.hex()}: kind {e['kind']} unknown")
            entries.append(e)
        r.end()
        return entries

    def status_tree(self, status_id):
        """§10: a status tree: (ino, ctime, atime, status subtree id or None) per entry."""
        r = Reader(self.blob(status_id, 1), f"status tree {status_id.hex()}")
        version = r.u8()
        if version != 0x81:
            raise FormatError(f"status tree {status_id.hex()}: version {version} unknown")
        entries = []
        ino = ctime = atime = 0  # each field a difference from the previous entry's, as u64
        for _ in range(r.u32()):
            ino, ctime, atime = r.delta(ino), r.delta(ctime), r.delta(atime)
            signed = lambda v: v - (1 << 64) if v >= 1 << 63 else v
            entries.append((ino, signed(ctime), signed(atime), r.take(32) if r.flag("has_subtree") else None))
        r.end()
        return entries


# ---------------------------------------------------------------------------------------------
# extraction


class Extractor:
    def __init__(self, repo):
        self.repo = repo
        self.links = {}  # (dev, ino) -> first path extracted, for hard links
        self.counts = {"files": 0, "dirs": 0, "symlinks": 0, "hardlinks": 0, "others": 0, "status_trees": 0, "status_trees_unfit": 0}

    def extract_tree(self, tree_id, target, status_id=None):
        """Extracts the tree under target; with `status_id`, takes the atimes from its status tree
        where that pairs with it as §10 says (same count, status subtrees only on directory
        entries); one that does not pair leaves the status of this directory and below unknown:
        atime = mtime, as for a tree without a status tree."""
        dirs = []
        entries = self.repo.tree(tree_id)
        status = [None] * len(entries)
        if status_id is not None:
            found = self.repo.status_tree(status_id)
            fits = len(found) == len(entries) and all(
                sub is None or e["kind"] == 2 for e, (_, _, _, sub) in zip(entries, found)
            )
            if fits:
                status = found
                self.counts["status_trees"] += 1
                for e, (_, _, atime, _) in zip(entries, status):
                    e["atime"] = atime
            else:
                self.counts["status_trees_unfit"] += 1
        for e, st in zip(entries, status):
            path = os.path.join(target, e["name"])
            kind = e["kind"]
            if kind == 2:
                os.mkdir(path)
                self.extract_tree(e["subtree"], path, st[3] if st else None)
                dirs.append((path, e))
                self.counts["dirs"] += 1
                continue
            if kind == 1 and e["nlink"] > 1 and (e["dev"], e["ino"]) in self.links:
                os.link(self.links[(e["dev"], e["ino"])], path)
                self.counts["hardlinks"] += 1
                continue
            if kind == 1:
                self.write_file(path, e)
                self.counts["files"] += 1
                if e["nlink"] > 1:
                    self.links[(e["dev"], e["ino"])] = path
            elif kind == 3:
                os.symlink(e["target"], path)
                self.counts["symlinks"] += 1
            else:
                self.counts["others"] += 1
                continue  # fifos, devices, sockets: not needed to check the format
            self.set_metadata(path, e)
        for path, e in dirs:  # after their content, which changes a directory's mtime
            self.set_metadata(path, e)

    def write_file(self, path, e):
        size = 0
        with open(path, "wb") as f:
            for chunk_id in e["chunks"]:
                chunk = self.repo.blob(chunk_id, 0)
                if chunk.count(0) == len(chunk):
                    f.seek(len(chunk), os.SEEK_CUR)  # §10: an all-zero chunk is a hole
                else:
                    f.write(chunk)
                size += len(chunk)
            f.truncate(size)
        if size != e["size"] and not e["flags"]:
            raise FormatError(f"{path}: chunks hold {size} bytes, the entry says {e['size']}")

    def set_metadata(self, path, e):
        symlink = e["kind"] == 3
        for name, value in e["xattrs"]:
            try:
                os.setxattr(path, name, value, follow_symlinks=not symlink)
            except OSError:
                pass  # e.g. trusted.* without privilege; the reader still parsed them
        if os.geteuid() == 0:
            os.chown(path, e["uid"], e["gid"], follow_symlinks=not symlink)
        if not symlink:
            os.chmod(path, stat.S_IMODE(e["mode"]))
        os.utime(path, ns=(e["atime"], e["mtime"]), follow_symlinks=not symlink)


def main(argv):
    if len(argv) < 3 or argv[2] not in ("list", "extract", "check-packs"):
        print(__doc__, file=sys.stderr)
        return 2
    password = os.environ.get("DEDUP_PASSWORD", "").encode()
    repo = open_repository(argv[1], password)
    if argv[2] == "list":
        for s in repo.snapshots():
            paths = " ".join(p.decode(errors="replace") for p in s["paths"])
            original = f" original={s['original'][:8]}" if s["original"] else ""
            print(f"{s['id'][:8]} {s['time']} {s['host']} {paths}{original}")
        return 0
    if argv[2] == "check-packs":
        for shard in listing(os.path.join(argv[1], "data")):
            for pack_id in listing(os.path.join(argv[1], "data", shard)):
                repo.check_pack(pack_id)
        print("packs ok")
        return 0
    snapshot = repo.find_snapshot(argv[3])
    target = os.fsencode(argv[4])
    os.makedirs(target, exist_ok=True)
    extractor = Extractor(repo)
    extractor.extract_tree(snapshot["tree"], target, snapshot["status_tree"])
    counts = " ".join(f"{k}={v}" for k, v in extractor.counts.items())
    print(f"snapshot {snapshot['id'][:8]}: {counts} blobs_checked={repo.blobs_checked}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except FormatError as err:
        print(f"read_repo: {err}", file=sys.stderr)
        sys.exit(1)
