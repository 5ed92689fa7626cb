#!/usr/bin/env bash
# The modeled hard disk (bench/hdd/README.md): an ext4 (or XFS) image served through hdd-model (FUSE, each
# request delayed by a disk model), a loop device on it with direct I/O, XFS mounted on that.
#
# usage: bench/hdd/hdd.sh COMMAND [ARGS]
#   build                      cargo build --release of hdd-model (its own project, bench/hdd/)
#   make SIZE SOURCE           a new image of SIZE (truncate(1) units) with mkfs.$HDD_FS, filled with
#                              SOURCE's contents (cp -a SOURCE/. ; SOURCE may be a command: see
#                              below), on a plain loop device: filling does not go through the model
#   up [MODEL OPTIONS]         serve the image through the model and mount it on $HDD_MNT;
#                              options go to hdd-model (--log FILE, --rate-mbs N, ...: hdd-model --help)
#   run COMMAND [ARG]...       sync, drop caches (the page cache and the modeled drive's), run
#                              COMMAND (cwd unchanged), then print its wall
#                              time and what the model served meanwhile (requests, seek, rotation,
#                              transfer) and the log's marks around it (hdd-model --replay LOG
#                              --marks A B); {} in an argument stands for $HDD_MNT
#   refresh                    a new, empty file system in place of the mounted one (mkfs.$HDD_FS on
#                              the loop device, through the model, with a fixed UUID and hash
#                              seed): the same empty disk for every run of a restore benchmark
#   stats                      the model's running totals
#   down                       unmount, detach, stop the model (also cleans up after a failed up)
#   calibrate [MODEL OPTIONS]  fio on a fresh model of a whole disk (a sparse image as large as
#                              --stroke-bytes, 500 GB by default; no file system): random 4 KiB
#                              reads over all of it and sequential 1 MiB reads, both one at a time
# SOURCE for make: a directory, or `gen:COMMAND` where COMMAND (run with sh -c) fills the directory
# named by $HDD_FILL (e.g. gen:'python3 bench/hdd/tree.py "$HDD_FILL"').
#
# environment:
#   HDD_DIR   where the image and the model's mount live (default /dev/shm/dedup-hdd: in RAM, so the
#             model's own reads of the image cost nothing and dropping caches does not touch it)
#   HDD_MNT   where the XFS file system is mounted (default /mnt/dedup-hdd)
#   HDD_FS    the file system: ext4 (default) or xfs
#   HDD_RT    run hdd-model under SCHED_FIFO priority N (default 10; 0: normal scheduling), so its
#             sleeps end on time on a busy machine
#   HDD_RUN_RT  run's COMMAND under SCHED_FIFO priority N (default 1; 0: normal scheduling): the
#             time between requests is then the command's own, not the wait for a busy CPU
# Needs root, fuse3 (fusermount3), e2fsprogs or xfsprogs, and fio for calibrate.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HDD_DIR=${HDD_DIR:-/dev/shm/dedup-hdd}
HDD_MNT=${HDD_MNT:-/mnt/dedup-hdd}
HDD_FS=${HDD_FS:-ext4}
HDD_RT=${HDD_RT:-10}
HDD_RUN_RT=${HDD_RUN_RT:-1}
IMAGE=$HDD_DIR/disk.img
FUSE=$HDD_DIR/fuse
STATE=$HDD_DIR/state
FS_UUID=4a7f41d0-0041-4041-8041-0000000000f1

die() { echo "hdd.sh: $*" >&2; exit 2; }
say() { echo "hdd.sh: $*" >&2; }

model_binary() {
    local bin
    bin=$(ls -t "$HERE"/target/*/release/hdd-model "$HERE"/target/release/hdd-model 2>/dev/null | head -1 || true)
    [[ -n $bin ]] || die "hdd-model is not built: bench/hdd/hdd.sh build"
    echo "$bin"
}

cmd_build() {
    (cd "$HERE" && cargo build --release --locked)
}

cmd_make() {
    (($# == 2)) || die "usage: make SIZE SOURCE"
    local size=$1 source=$2 loop fill
    [[ -e $STATE ]] && die "the model is up ($STATE): hdd.sh down first"
    mkdir -p "$HDD_DIR"
    rm -f "$IMAGE"
    truncate -s "$size" "$IMAGE"
    make_fs "$IMAGE"
    fill=$HDD_DIR/fill
    mkdir -p "$fill"
    loop=$(losetup -f --show "$IMAGE")
    if ! mount -o noatime "$loop" "$fill"; then
        losetup -d "$loop"
        die "cannot mount the new image"
    fi
    local status=0
    case $source in
        gen:*) HDD_FILL=$fill sh -c "${source#gen:}" || status=$? ;;
        *) [[ -d $source ]] && cp -a "$source/." "$fill/" || status=$? ;;
    esac
    sync
    say "image $IMAGE: $(df -h --output=used "$fill" | tail -1 | xargs) of $(df -h --output=size "$fill" | tail -1 | xargs) used, $(df --output=iused "$fill" | tail -1 | xargs) inodes"
    umount "$fill"
    losetup -d "$loop"
    rmdir "$fill"
    ((status == 0)) || die "filling the image failed (status $status)"
}

# make_fs DEVICE_OR_FILE: an empty file system, its inode tables and journal written whole (no
# lazy initialisation, which would write them later, in the background of a measured run), no
# discard, and the same UUID and directory hash seed every time (so directories hash alike).
make_fs() {
    case $HDD_FS in
        ext4) mkfs.ext4 -q -F -U "$FS_UUID" -E "lazy_itable_init=0,lazy_journal_init=0,nodiscard,hash_seed=$FS_UUID" "$1" ;;
        xfs) mkfs.xfs -q -f -K -m "uuid=$FS_UUID" "$1" ;;
        *) die "HDD_FS: ext4 or xfs, not $HDD_FS" ;;
    esac
}

# start_model IMAGE FUSE_DIR LOG_FILE [MODEL OPTIONS]: serves IMAGE on FUSE_DIR; sets MODEL_PID.
start_model() {
    local image=$1 fuse=$2 err=$3 bin rt=()
    shift 3
    bin=$(model_binary)
    ((HDD_RT > 0)) && rt=(chrt -f "$HDD_RT")
    # Its own session, no terminal and no inherited pipes: it outlives this script, and a caller
    # reading this script's output is not kept waiting for it.
    setsid "${rt[@]}" "$bin" "$image" "$fuse" "$@" < /dev/null > "$err" 2>&1 &
    MODEL_PID=$!
    for _ in $(seq 100); do
        [[ -e $fuse/disk.img ]] && return 0
        kill -0 "$MODEL_PID" 2>/dev/null || { cat "$err" >&2; return 1; }
        sleep 0.1
    done
    return 1
}

# stop_model FUSE_DIR PID: unmounts the model's file system and waits for it to exit.
stop_model() {
    local fuse=$1 pid=$2
    if mountpoint -q "$fuse" 2>/dev/null; then
        # The loop device lets go of the image asynchronously after detaching.
        for _ in $(seq 50); do fusermount3 -u "$fuse" 2>/dev/null && break; sleep 0.1; done
    fi
    if [[ -n $pid ]]; then
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && say "hdd-model ($pid) is still running"
    fi
    return 0
}

# attach_loop FILE: a loop device on FILE with direct I/O, marked rotational; prints its name.
attach_loop() {
    local loop
    loop=$(losetup -f --show --direct-io=on "$1") || return 1
    # A spinning disk says so: tools that choose their strategy by device type see one.
    echo 1 > "/sys/block/${loop#/dev/}/queue/rotational"
    [[ $(losetup -n -O DIO "$loop" | xargs) == 1 ]] || say "warning: $loop does not do direct I/O: the page cache hides requests from the model"
    echo "$loop"
}

cmd_up() {
    [[ -e $IMAGE ]] || die "no image at $IMAGE: hdd.sh make SIZE SOURCE"
    [[ -e $STATE ]] && die "the model is already up ($STATE)"
    local loop
    mkdir -p "$FUSE" "$HDD_MNT"
    start_model "$IMAGE" "$FUSE" "$HDD_DIR/model.err" "$@" || { cmd_down; die "hdd-model did not start"; }
    echo "pid=$MODEL_PID" > "$STATE"
    loop=$(attach_loop "$FUSE/disk.img") || { cmd_down; die "cannot attach a loop device to $FUSE/disk.img"; }
    echo "loop=$loop" >> "$STATE"
    mount -o noatime "$loop" "$HDD_MNT" || { cmd_down; die "cannot mount $loop on $HDD_MNT"; }
    echo "mnt=$HDD_MNT" >> "$STATE"
    say "$(head -1 "$HDD_DIR/model.err")"
    say "up: $IMAGE -> $FUSE/disk.img -> $loop (direct I/O, rotational, max_sectors_kb $(cat "/sys/block/${loop#/dev/}/queue/max_sectors_kb")) -> $HDD_MNT"
}

state_of() { [[ -e $STATE ]] && sed -n "s/^$1=//p" "$STATE" || true; }

cmd_down() {
    local pid loop mnt
    pid=$(state_of pid) loop=$(state_of loop) mnt=$(state_of mnt)
    [[ -n $mnt ]] && mountpoint -q "$mnt" && umount "$mnt"
    [[ -n $loop ]] && losetup -d "$loop" 2>/dev/null
    stop_model "$FUSE" "$pid"
    rm -f "$STATE"
}

cmd_refresh() {
    local loop mnt
    loop=$(state_of loop) mnt=$(state_of mnt)
    [[ -n $loop && -n $mnt ]] || die "the model is not up"
    mountpoint -q "$mnt" && umount "$mnt"
    make_fs "$loop" > /dev/null
    mount -o noatime "$loop" "$mnt" || die "cannot mount $loop on $mnt"
}

cmd_stats() {
    [[ -r $FUSE/stats ]] || die "the model is not up"
    cat "$FUSE/stats"
}

cmd_run() {
    (($#)) || die "usage: run COMMAND [ARG]..."
    [[ -r $FUSE/stats ]] || die "the model is not up"
    local args=() a before after start end status=0
    ((HDD_RUN_RT > 0)) && args=(chrt -f "$HDD_RUN_RT")
    for a in "$@"; do args+=("${a//\{\}/$HDD_MNT}"); done
    sync
    echo 3 > /proc/sys/vm/drop_caches
    # Cold all the way down: the drive's cache too, and the head parked, so that every run starts
    # from the same disk (and costs what a replay of its requests on a new model costs).
    echo reset > "$FUSE/stats"
    before=$(cat "$FUSE/stats"; drops_by_others)
    start=$(date +%s.%N)
    "${args[@]}" || status=$?
    end=$(date +%s.%N)
    after=$(cat "$FUSE/stats"; drops_by_others)
    awk -v start="$start" -v end="$end" -v status="$status" '
        NR == FNR { before[$1] = $2; next }
        { d[$1] = $2 - before[$1] }
        END {
            printf "wall_s %.3f status %d requests %d (reads %d, writes %d) read_MB %.1f seeks %d cache_hits %d seek_s %.3f rotation_s %.3f transfer_s %.3f busy_s %.3f late_s %.3f drops %d marks %d %d\n",
                end - start, status, d["reads"] + d["writes"], d["reads"], d["writes"], d["read_bytes"] / 1e6,
                d["seeks"], d["cache_hits"], d["seek_s"], d["rotation_s"], d["transfer_s"], d["busy_s"], d["late_s"],
                d["drops"], before["mark"], before["mark"] + d["mark"]
        }' <(echo "$before") <(echo "$after")
    return "$status"
}

# drops_by_others: a `drops N` line, N the times the page cache was dropped so far (/proc/vmstat
# drop_pagecache): a run during which another process drops it (a cold benchmark beside this one)
# reads again what it had read, and its figures are not its own.
drops_by_others() {
    awk '$1 == "drop_pagecache" { print "drops", $2 }' /proc/vmstat
}

cmd_calibrate() {
    command -v fio > /dev/null || die "fio is missing: apt-get install -y fio"
    local dir loop size=500000000000 status=0 i next
    for ((i = 1; i < $#; i++)); do
        next=$((i + 1))
        [[ ${!i} == --stroke-bytes ]] && size=${!next}
    done
    dir=$(mktemp -d /dev/shm/dedup-hdd-calibrate.XXXXXX)
    mkdir "$dir/fuse"
    truncate -s "$size" "$dir/disk.img"
    MODEL_PID=
    if start_model "$dir/disk.img" "$dir/fuse" "$dir/model.err" "$@" && loop=$(attach_loop "$dir/fuse/disk.img"); then
        say "$(head -1 "$dir/model.err")"
        local common=(--filename="$loop" --direct=1 --ioengine=psync --iodepth=1 --readonly --output-format=terse --terse-version=3)
        local run=()
        ((HDD_RUN_RT > 0)) && run=(chrt -f "$HDD_RUN_RT")
        # terse v3: field 7 = read bandwidth KiB/s, 8 = read IOPS
        "${run[@]}" fio --name=random4k --rw=randread --bs=4k --runtime=30 --time_based --randseed=41 "${common[@]}" |
            awk -F';' '{ printf "random 4 KiB reads over the whole disk, one at a time: %d IOPS (%.2f ms each)\n", $8, 1000 / $8 }' || status=$?
        "${run[@]}" fio --name=seq1m --rw=read --bs=1m --size=2g "${common[@]}" |
            awk -F';' '{ printf "sequential 1 MiB reads, one at a time: %.1f MB/s\n", $7 * 1024 / 1e6 }' || status=$?
        echo "model totals:"
        cat "$dir/fuse/stats"
        losetup -d "$loop"
    else
        say "the model did not come up"
        status=1
    fi
    stop_model "$dir/fuse" "$MODEL_PID"
    rm -rf "$dir"
    return "$status"
}

(($#)) || { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 2; }
command=$1
shift
case $command in
    build | make | up | down | refresh | stats | run | calibrate) "cmd_$command" "$@" ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' ;;
    *) die "unknown command $command (build, make, up, refresh, run, stats, down, calibrate)" ;;
esac
