#!/bin/bash
# Profiles the writable volume at a small scale (issue 38): perf record on the mount process
# during a dd 1st write, a 2nd write of the same bytes, a cold read and cp -a /usr/share/doc,
# then the top symbols of each. Root (mounts, drop_caches). A release build with symbols:
#   CARGO_PROFILE_RELEASE_STRIP=none cargo build --release -p dedup-cli
# usage: bench/fs/profile.sh BINARY OUTDIR [SIZE_MIB, default 256]  (work dir: $WORK or /var/tmp/dedup-fs-prof)
set -u
BIN=$1; OUT=$2; SIZE=${3:-256}
W=${WORK:-/var/tmp/dedup-fs-prof}
fusermount3 -u $W/mnt 2>/dev/null
rm -rf $W; mkdir -p $W/mnt $OUT
export DEDUP_PASSWORD=bench
$BIN store init -r $W/repo >/dev/null
head -c ${SIZE}M /dev/urandom > $W/src.bin
$BIN store -r $W/repo mount --writable bench $W/mnt 2>$OUT/mount.err &
MP=$!
for i in $(seq 100); do mountpoint -q $W/mnt && break; sleep 0.1; done
rec() { perf record -F 499 -g -p $MP -o $OUT/$1.data 2>/dev/null & PP=$!; sleep 0.5; }
stop() { kill -INT $PP; wait $PP 2>/dev/null; }
rec w1; /usr/bin/time -f "w1 %e s" dd if=$W/src.bin of=$W/mnt/a bs=1M conv=fsync 2>&1 | tail -2 | tr "\n" " "; echo; stop
rec w2; /usr/bin/time -f "w2 %e s" dd if=$W/src.bin of=$W/mnt/b bs=1M conv=fsync 2>&1 | tail -2 | tr "\n" " "; echo; stop
sync; echo 3 > /proc/sys/vm/drop_caches
rec rd; /usr/bin/time -f "rd %e s" dd if=$W/mnt/a of=/dev/null bs=1M 2>&1 | tail -2 | tr "\n" " "; echo; stop
rec cp; /usr/bin/time -f "cp %e s" cp -a /usr/share/doc $W/mnt/doc; python3 -c "import os;fd=os.open('$W/mnt/.c',os.O_WRONLY|os.O_CREAT);os.fsync(fd)"; stop
grep VmHWM /proc/$MP/status
fusermount3 -u $W/mnt; wait $MP; echo "mount rc=$?"
for p in w1 w2 rd cp; do echo "== $p"; perf report -i $OUT/$p.data --no-children -g none --sort dso,symbol --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -25; done
