#!/usr/bin/env python3
"""How fast the kernel copies page-cache data into a buffer, by where the buffer starts.

Reads FILE (cached first) with pread into a buffer starting OFFSET bytes past a page boundary,
for several offsets, and prints GB/s for each. On the project's reference machine (AMD EPYC),
offsets 1-31 run at about a fifth of the speed of the others, and glibc places every large
allocation at offset 16: the reason dedup_scan::ReadBuf aligns its buffers.

    bench/copy-alignment.py FILE [PIECE_BYTES]
"""
import mmap
import os
import sys
import time

OFFSETS = [0, 8, 16, 24, 32, 48, 64, 2048, 4080]


def main():
    path = sys.argv[1]
    piece = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    size -= size % piece
    if size == 0:
        sys.exit(f"{path}: smaller than one piece of {piece} bytes")
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 24):
            pass
    area = mmap.mmap(-1, piece + 2 * mmap.PAGESIZE)  # anonymous: starts on a page boundary
    view = memoryview(area)
    for off in OFFSETS:
        buf = [view[off:off + piece]]
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for pos in range(0, size, piece):
                os.preadv(fd, buf, pos)
            best = min(best, time.perf_counter() - start)
        print(f"piece {piece} B, buffer at page offset {off:4d}: {size / best / 1e9:6.2f} GB/s")


if __name__ == "__main__":
    main()
