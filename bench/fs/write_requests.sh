#!/bin/bash
# Counts the FUSE requests, by kind, that writing MIB MiB through a fresh writable volume costs
# (issue 38: the kernel's `getxattr security.capability` before each write(2) without
# FUSE_HANDLE_KILLPRIV_V2): dd in BS-sized writes, traced as requests.sh does. Root.
# usage: bench/fs/write_requests.sh BINARY [MIB, default 64] [BS_KIB, default 128]  (work dir: $WORK or /var/tmp/dedup-fs-wreq)
set -u
BIN=$1; MIB=${2:-64}; BS=${3:-128}
W=${WORK:-/var/tmp/dedup-fs-wreq}
T=/sys/kernel/tracing/instances/dedup-fs-wreq-$$
fusermount3 -u $W/mnt 2>/dev/null
rm -rf $W; mkdir -p $W/mnt
export DEDUP_PASSWORD=bench
$BIN store init -r $W/repo >/dev/null
$BIN store -r $W/repo mount --writable bench $W/mnt 2>$W/mount.err &
MP=$!
for i in $(seq 100); do mountpoint -q $W/mnt && break; sleep 0.1; done
mkdir -p $T
echo 65536 > $T/buffer_size_kb
echo "connection == $(stat -c %d $W/mnt)" > $T/events/fuse/fuse_request_send/filter
echo 1 > $T/events/fuse/fuse_request_send/enable
dd if=/dev/urandom of=$W/mnt/f bs=${BS}k count=$((MIB * 1024 / BS)) conv=fsync 2>&1 | tail -1
echo 0 > $T/events/fuse/fuse_request_send/enable
grep -o "opcode [0-9]* ([A-Z_0-9]*)" $T/trace | sort | uniq -c | sort -rn
rmdir $T
fusermount3 -u $W/mnt; wait $MP
rm -rf $W
