#!/usr/bin/env bash
# An unchanged backup of the linux source on the modeled disk into a repository on tmpfs that
# already holds a backup of it, one tool at a time, for bench/hdd/compare.py. `prepare` makes each
# repository once, outside the timed runs (a first backup of the same path, so that every tool
# finds its parent: dedup and restic by path, bupstash through its send log); each timed run backs
# the tree up again, cold, and adds a snapshot that shares everything with the one before:
#   bench/hdd/store-unchanged.sh prepare dedup target/x86_64-unknown-linux-gnu/release/dedup /mnt/dedup-hdd
#   python3 bench/hdd/compare.py --rounds 3 \
#     "dedup=bench/hdd/store-unchanged.sh dedup target/x86_64-unknown-linux-gnu/release/dedup {}" \
#     "bupstash=bench/hdd/store-unchanged.sh bupstash bupstash {}" "restic=bench/hdd/store-unchanged.sh restic restic {}"
# usage: store-unchanged.sh prepare TOOL BINARY MOUNT   (a first backup of MOUNT/TREE into a new repository)
#        store-unchanged.sh TOOL BINARY MOUNT           (the unchanged backup)
# TOOL: dedup, restic or bupstash. Environment: STORE_REPOS (where the repositories go, default
# /dev/shm/store-hdd-unchanged), STORE_TREE (the tree under MOUNT, default linux-source-6.1).
# Passwords as bench/store/run.py gives them; bupstash's key is made by prepare at
# $STORE_REPOS/bup.key, its send log kept at $STORE_REPOS/bup.send-log.
set -euo pipefail
repos=${STORE_REPOS:-/dev/shm/store-hdd-unchanged}
password=bench-store-password
export DEDUP_PASSWORD=$password RESTIC_PASSWORD=$password
export BUPSTASH_QUERY_CACHE=$repos/bup.query-cache

die() { echo "store-unchanged.sh: $*" >&2; exit 2; }

backup() {
    local tool=$1 bin=$2 repo=$3 tree=$4
    case $tool in
        dedup) "$bin" store -r "$repo" backup -q "$tree" ;;
        restic) "$bin" -r "$repo" backup -q "$tree" ;;
        bupstash)
            BUPSTASH_REPOSITORY=$repo "$bin" put -q -k "$repos/bup.key" \
                --send-log "$repos/bup.send-log" "$tree" > /dev/null ;;
        *) die "dedup, restic or bupstash, not $tool" ;;
    esac
}

prepare() {
    local tool=$1 bin=$2 tree=$3 repo=$repos/$1
    [[ -d $tree ]] || die "no tree $tree"
    mkdir -p "$repos"
    rm -rf "$repo"
    case $tool in
        dedup) "$bin" store -r "$repo" init -q ;;
        restic) "$bin" -r "$repo" init -q ;;
        bupstash)
            [[ -e $repos/bup.key ]] || "$bin" new-key -o "$repos/bup.key"
            rm -f "$repos/bup.send-log"
            BUPSTASH_REPOSITORY=$repo "$bin" init ;;
        *) die "dedup, restic or bupstash, not $tool" ;;
    esac
    backup "$tool" "$bin" "$repo" "$tree"
}

(($# == 4)) && [[ $1 == prepare ]] && { prepare "$2" "$3" "$4/${STORE_TREE:-linux-source-6.1}"; exit; }
(($# == 3)) || die "usage: store-unchanged.sh prepare TOOL BINARY MOUNT | TOOL BINARY MOUNT"
[[ -d $repos/$1 ]] || die "no repository $repos/$1: store-unchanged.sh prepare $1 BINARY MOUNT"
backup "$1" "$2" "$repos/$1" "$3/${STORE_TREE:-linux-source-6.1}"
