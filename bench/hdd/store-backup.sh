#!/usr/bin/env bash
# A first backup of the linux source on the modeled disk into a new repository on tmpfs, one
# tool at a time (the repository made fresh inside the timed run, as in the journal's "A disk
# that seeks"), for bench/hdd/compare.py:
#   python3 bench/hdd/compare.py --rounds 2 \
#     "dedup-new=bench/hdd/store-backup.sh dedup target/x86_64-unknown-linux-gnu/release/dedup {}" \
#     "bupstash=bench/hdd/store-backup.sh bupstash bupstash {}" ...
# usage: store-backup.sh dedup|bupstash|restic BINARY MOUNT
# environment: STORE_REPOS (where the repositories go, default /dev/shm/store-hdd), STORE_TREE
# (the tree under MOUNT, default linux-source-6.1). bupstash's key is made once, outside the run,
# at $STORE_REPOS/bup.key. Passwords as bench/store/run.py gives them.
set -euo pipefail
tool=$1 bin=$2 mnt=$3
repos=${STORE_REPOS:-/dev/shm/store-hdd}
tree=$mnt/${STORE_TREE:-linux-source-6.1}
password=bench-store-password
mkdir -p "$repos"
repo=$repos/$tool
rm -rf "$repo"
case $tool in
    dedup)
        export DEDUP_PASSWORD=$password
        "$bin" store -r "$repo" init -q
        exec "$bin" store -r "$repo" backup -q "$tree" ;;
    bupstash)
        [[ -e $repos/bup.key ]] || { echo "store-backup.sh: no $repos/bup.key (bupstash new-key -o)" >&2; exit 2; }
        export BUPSTASH_REPOSITORY=$repo
        "$bin" init
        exec "$bin" put -q -k "$repos/bup.key" "$tree" ;;
    restic)
        export RESTIC_PASSWORD=$password
        "$bin" -r "$repo" init -q
        exec "$bin" -r "$repo" backup -q "$tree" ;;
    *) echo "store-backup.sh: dedup, bupstash or restic, not $tool" >&2; exit 2 ;;
esac
