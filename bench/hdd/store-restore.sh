#!/usr/bin/env bash
# A restore of the linux source from a repository on tmpfs onto the modeled disk, one tool at a
# time, for bench/hdd/compare.py. The repositories are made once, outside the timed runs
# (`prepare`); each timed run restores the latest snapshot into a directory that does not exist
# yet on the model's file system and ends with `sync -f` of it: a restore whose writes still sit
# in the page cache has not reached the disk. Run `hdd.sh refresh` before each run (compare.py
# --before) so that every restore starts from the same empty file system:
#   bench/hdd/store-restore.sh prepare dedup target/x86_64-unknown-linux-gnu/release/dedup /dev/shm/src/linux-source-6.1
#   python3 bench/hdd/compare.py --rounds 2 --before "bench/hdd/hdd.sh refresh" \
#     "dedup=bench/hdd/store-restore.sh dedup target/x86_64-unknown-linux-gnu/release/dedup {}" \
#     "bupstash=bench/hdd/store-restore.sh bupstash bupstash {}" ...
# usage: store-restore.sh prepare TOOL BINARY SOURCE   (back SOURCE up into a new repository)
#        store-restore.sh TOOL BINARY MOUNT            (restore it into MOUNT/restore, then sync -f)
# TOOL: dedup, restic, bupstash or borg. Environment: STORE_REPOS (where the repositories are,
# default /dev/shm/store-hdd-restore), STORE_TARGET (the directory under MOUNT, default
# restore). Passwords as bench/store/run.py gives them; bupstash's key is made by prepare at
# $STORE_REPOS/bup.key.
set -euo pipefail
repos=${STORE_REPOS:-/dev/shm/store-hdd-restore}
password=bench-store-password
export DEDUP_PASSWORD=$password RESTIC_PASSWORD=$password BORG_PASSPHRASE=$password
export BUPSTASH_QUERY_CACHE=$repos/bup.query-cache BORG_BASE_DIR=$repos/borg-base
export BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes BORG_RELOCATED_REPO_ACCESS_IS_OK=yes

die() { echo "store-restore.sh: $*" >&2; exit 2; }

prepare() {
    local tool=$1 bin=$2 source=$3 repo
    [[ -d $source ]] || die "no source directory $source"
    source=$(cd "$source" && pwd)
    mkdir -p "$repos"
    repo=$repos/$tool
    rm -rf "$repo"
    # The source is named relative to its parent, so that every tool restores the same tree
    # below the target (restic keeps absolute paths whatever it is given).
    cd "$(dirname "$source")"
    local name
    name=$(basename "$source")
    case $tool in
        dedup)
            "$bin" store -r "$repo" init -q
            "$bin" store -r "$repo" backup -q "$name" ;;
        restic)
            "$bin" -r "$repo" init -q
            "$bin" -r "$repo" backup -q "$name" ;;
        bupstash)
            [[ -e $repos/bup.key ]] || "$bin" new-key -o "$repos/bup.key"
            BUPSTASH_REPOSITORY=$repo "$bin" init
            BUPSTASH_REPOSITORY=$repo "$bin" put -q -k "$repos/bup.key" "$name" > "$repo.id" ;;
        borg)
            "$bin" init -e repokey-blake2 "$repo"
            "$bin" create "$repo::snap" "$name" ;;
        *) die "dedup, restic, bupstash or borg, not $tool" ;;
    esac
}

restore() {
    local tool=$1 bin=$2 mnt=$3 repo target
    repo=$repos/$tool
    target=$mnt/${STORE_TARGET:-restore}
    [[ -d $repo ]] || die "no repository $repo: store-restore.sh prepare $tool BINARY SOURCE"
    [[ -e $target ]] && die "$target exists: the restore must go into a new directory (hdd.sh refresh)"
    case $tool in
        dedup) "$bin" store -r "$repo" restore -q latest --target "$target" ;;
        restic) "$bin" -r "$repo" restore -q latest --target "$target" ;;
        bupstash)
            mkdir "$target"
            BUPSTASH_REPOSITORY=$repo "$bin" restore -k "$repos/bup.key" --into "$target" "id=$(cat "$repo.id")" ;;
        borg)
            mkdir "$target"
            (cd "$target" && "$bin" extract "$repo::snap") ;;
        *) die "dedup, restic, bupstash or borg, not $tool" ;;
    esac
    # On the disk, not in the page cache: the restore is not done before this returns.
    sync -f "$target"
}

(($# >= 1)) || die "usage: store-restore.sh prepare TOOL BINARY SOURCE | TOOL BINARY MOUNT"
if [[ $1 == prepare ]]; then
    (($# == 4)) || die "usage: store-restore.sh prepare TOOL BINARY SOURCE"
    prepare "$2" "$3" "$4"
else
    (($# == 3)) || die "usage: store-restore.sh TOOL BINARY MOUNT"
    restore "$1" "$2" "$3"
fi
