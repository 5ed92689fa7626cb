#!/bin/bash
# Counts the FUSE requests, by kind, that one shell command costs on a fresh writable volume:
# the kernel's fuse_request_send tracepoint, filtered to the volume's connection, in a trace
# instance of its own. The command sees the mount point as $MNT. Root (mounts, tracefs).
# With TIMES=1, also fuse_request_end: the time requests took, by kind (request_times.py).
# usage: bench/fs/trace_requests.sh BINARY WORKDIR 'COMMAND'   (used by requests.sh, write_requests.sh)
set -u
BIN=$1; W=$2; CMD=$3
T=/sys/kernel/tracing/instances/dedup-fs-trace-$$
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
if [ "${TIMES:-0}" = 1 ]; then
    echo "connection == $(stat -c %d $W/mnt)" > $T/events/fuse/fuse_request_end/filter
    echo 1 > $T/events/fuse/fuse_request_end/enable
fi
MNT=$W/mnt bash -c "$CMD"
echo 0 > $T/events/fuse/fuse_request_send/enable
echo 0 > $T/events/fuse/fuse_request_end/enable
grep -o "opcode [0-9]* ([A-Z_0-9]*)" $T/trace | sort | uniq -c | sort -rn
[ "${TIMES:-0}" = 1 ] && python3 "$(dirname "$0")/request_times.py" < $T/trace
rmdir $T
fusermount3 -u $W/mnt; wait $MP
rm -rf $W
