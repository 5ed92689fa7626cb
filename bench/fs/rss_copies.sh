#!/bin/sh
# The writable volume's peak RSS over small files only (issue 38): mounts a fresh volume with
# each dedup binary given, copies SRC (default /usr/share) into it twice with `cp -a`, commits
# (an fsync in the mount) and prints the mount process's VmHWM. The inode table's cost shows
# here without the large file's held chunks that bench/fs/run.py's peak also holds.
# Usage (root): bench/fs/rss_copies.sh WORK DEDUP... ; SRC=/some/tree to copy another tree.
set -eu
[ "$#" -ge 2 ] || { echo "usage: $0 WORK DEDUP..." >&2; exit 2; }
work=$1
shift
src=${SRC:-/usr/share}
export DEDUP_PASSWORD=bench
for dedup in "$@"; do
    rm -rf "$work"
    mkdir -p "$work/mnt"
    "$dedup" store init -r "$work/repo" >/dev/null
    "$dedup" store -r "$work/repo" mount --writable bench "$work/mnt" 2>/dev/null &
    pid=$!
    tries=0
    until grep -q " $work/mnt " /proc/self/mounts; do
        tries=$((tries + 1))
        [ "$tries" -le 600 ] || { echo "$work/mnt did not mount" >&2; exit 1; }
        sleep 0.1
    done
    cp -a "$src" "$work/mnt/copy1" || true
    cp -a "$src" "$work/mnt/copy2" || true
    python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644))' \
        "$work/mnt/.commit"
    inodes=$(find "$work/mnt" | wc -l)
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
    fusermount3 -u "$work/mnt"
    wait "$pid"
    echo "$dedup: peak RSS $((hwm / 1024)) MiB ($hwm KiB) over $inodes inodes"
    rm -rf "$work"
done
