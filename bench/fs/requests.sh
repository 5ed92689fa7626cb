#!/bin/bash
# Counts the FUSE requests, by kind, that one `cp -a SRC` into a fresh writable volume costs
# (issue 38, small files): the kernel's fuse_request_send tracepoint, filtered to the volume's
# connection, in a trace instance of its own. Root (mounts, tracefs).
# usage: bench/fs/requests.sh BINARY [SRC, default /usr/share/doc]  (work dir: $WORK or /var/tmp/dedup-fs-requests)
set -u
BIN=$1; SRC=${2:-/usr/share/doc}
W=${WORK:-/var/tmp/dedup-fs-requests}
T=/sys/kernel/tracing/instances/dedup-fs-requests-$$
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
/usr/bin/time -f "cp -a: %e s" cp -a $SRC $W/mnt/copy
echo 0 > $T/events/fuse/fuse_request_send/enable
echo "entries: $(find $SRC | wc -l)"
grep -o "opcode [0-9]* ([A-Z_0-9]*)" $T/trace | sort | uniq -c | sort -rn
rmdir $T
fusermount3 -u $W/mnt; wait $MP
rm -rf $W
