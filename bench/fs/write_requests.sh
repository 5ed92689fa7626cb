#!/bin/bash
# Counts the FUSE requests, by kind, that writing MIB MiB through a fresh writable volume costs
# (issue 38: the kernel's `getxattr security.capability` before each write(2) without
# FUSE_HANDLE_KILLPRIV_V2): dd in BS-sized writes, through trace_requests.sh. Root.
# usage: bench/fs/write_requests.sh BINARY [MIB, default 64] [BS_KIB, default 128]  (work dir: $WORK or /var/tmp/dedup-fs-wreq)
set -u
BIN=$1; MIB=${2:-64}; BS=${3:-128}
exec "$(dirname "$0")/trace_requests.sh" "$BIN" "${WORK:-/var/tmp/dedup-fs-wreq}" \
    "dd if=/dev/urandom of=\"\$MNT/f\" bs=${BS}k count=$((MIB * 1024 / BS)) conv=fsync 2>&1 | tail -1"
