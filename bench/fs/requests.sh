#!/bin/bash
# Counts the FUSE requests, by kind, that one `cp -a SRC` into a fresh writable volume costs
# (issue 38, small files), through trace_requests.sh. Root (mounts, tracefs).
# usage: bench/fs/requests.sh BINARY [SRC, default /usr/share/doc]  (work dir: $WORK or /var/tmp/dedup-fs-requests)
set -u
BIN=$1; SRC=${2:-/usr/share/doc}
echo "entries: $(find "$SRC" | wc -l)"
exec "$(dirname "$0")/trace_requests.sh" "$BIN" "${WORK:-/var/tmp/dedup-fs-requests}" \
    "/usr/bin/time -f 'cp -a: %e s' cp -a '$SRC' \"\$MNT/copy\""
