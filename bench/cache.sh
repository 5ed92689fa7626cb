#!/usr/bin/env bash
# The persistent cache's benchmark (issue "rescans in seconds"): per tree, one hyperfine run each
# for warm and cold of
#   nocache  dedup find --no-cache TREE
#   first    dedup find --cache-dir C TREE, the cache removed before each run
#   rescan   dedup find --cache-dir C TREE, the tree unchanged since the cache was written
# and, with --changed, on a private copy of the tree after bench/mutate.py added 5 % of files and
# modified 5 % (the cache restored to its state before the changes before each run):
#   changed-nocache / changed-rescan
# whose groups are checked equal. Also the cache's size on disk per entry.
#
# usage: bench/cache.sh [--runs N] [--cold-runs N] [--no-cold] [--changed] [--results DIR] NAME=PATH...
#   e.g. bench/cache.sh --changed nested=/work/bench-data/scale-1/nested rustup=$HOME/.rustup
# environment: DEDUP (default: the release build, see default-dedup.sh), SCRATCH (copies for --changed,
# default /work/bench-scratch). Needs root for the cold runs (drop_caches). Prints a table of
# medians and ratios at the end; hyperfine JSON goes to RESULTS/cache-<name>-<condition>.json.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DEDUP=${DEDUP:-$("$BENCH/default-dedup.sh")}
SCRATCH=${SCRATCH:-/work/bench-scratch}
RESULTS=$BENCH/results/cache
RUNS=7
COLD_RUNS=3
COLD=1
CHANGED=0
die() { echo "cache.sh: $*" >&2; exit 2; }
log() { echo "cache.sh: $*" >&2; }

trees=()
while (($#)); do
    case $1 in
        --runs) RUNS=$2; shift ;;
        --cold-runs) COLD_RUNS=$2; shift ;;
        --no-cold) COLD=0 ;;
        --changed) CHANGED=1 ;;
        --results) RESULTS=$2; shift ;;
        -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
        *=*) trees+=("$1") ;;
        *) die "unknown argument: $1 (trees are given as NAME=PATH)" ;;
    esac
    shift
done
((${#trees[@]})) || die "no tree given (NAME=PATH)"
[[ -x $DEDUP ]] || die "no dedup binary at $DEDUP (cargo build --release)"
[[ -c /dev/null ]] || die "/dev/null is not a character device"
mkdir -p "$RESULTS"
CACHE=$(mktemp -d /tmp/dedup-cache-bench.XXXXXX)
trap 'rm -rf "$CACHE"' EXIT
drop="$BENCH/drop-caches.sh"

# hyperfine over the three commands; $1 name, $2 condition, $3 tree, $4 runs, $5 prepare (or "")
measure() {
    local name=$1 cond=$2 tree=$3 runs=$4 prep=$5
    local c="$CACHE/c" sep=""
    [[ -n $prep ]] && sep="; "
    # Commands run in order: the last "first" run leaves the cache the "rescan" runs use.
    hyperfine -N -w 1 -r "$runs" -i --export-json "$RESULTS/cache-$name-$cond.json" \
        --prepare "${prep:-true}" -n nocache "$DEDUP find -q --no-cache $tree" \
        --prepare "sh -c 'rm -rf $c$sep$prep'" -n first "$DEDUP find -q --cache-dir $c $tree" \
        --prepare "${prep:-true}" -n rescan "$DEDUP find -q --cache-dir $c $tree" >&2
    "$DEDUP" cache stats --cache-dir "$c" >"$RESULTS/cache-$name-stats.txt"
}

for spec in "${trees[@]}"; do
    name=${spec%%=*} tree=${spec#*=}
    [[ -d $tree ]] || die "$tree is not a directory"
    log "$name: warm"
    measure "$name" warm "$tree" "$RUNS" ""
    if ((COLD)); then
        log "$name: cold (drop_caches before each run)"
        measure "$name" cold "$tree" "$COLD_RUNS" "$drop"
    fi
    if ((CHANGED)); then
        copy="$SCRATCH/$name"
        log "$name: copying to $copy for the 5 % added / 5 % modified rescan"
        rm -rf "$copy" && mkdir -p "$SCRATCH" && cp -a "$tree" "$copy"
        base="$CACHE/base" c="$CACHE/c"
        rm -rf "$base" && "$DEDUP" find -q --cache-dir "$base" "$copy" >/dev/null
        sleep 1 # changes must not fall in the cache's "racily clean" window of the scan above
        python3 "$BENCH/mutate.py" "$copy" --add 5 --modify 5 | tee "$RESULTS/cache-$name-changed.txt" >&2
        restore="rm -rf $c; cp -a $base $c"
        hyperfine -N -w 1 -r "$RUNS" --export-json "$RESULTS/cache-$name-changed-warm.json" \
            --prepare true -n changed-nocache "$DEDUP find -q --no-cache $copy" \
            --prepare "sh -c '$restore'" -n changed-rescan "$DEDUP find -q --cache-dir $c $copy" >&2
        if ((COLD)); then
            hyperfine -N -w 1 -r "$COLD_RUNS" --export-json "$RESULTS/cache-$name-changed-cold.json" \
                --prepare "$drop" -n changed-nocache "$DEDUP find -q --no-cache $copy" \
                --prepare "sh -c '$restore; $drop'" -n changed-rescan "$DEDUP find -q --cache-dir $c $copy" >&2
        fi
        rm -rf "$c" && cp -a "$base" "$c"
        "$DEDUP" find --format json --cache-dir "$c" "$copy" >"$CACHE/with.json"
        "$DEDUP" find --format json --no-cache "$copy" >"$CACHE/without.json"
        python3 - "$CACHE/with.json" "$CACHE/without.json" <<'EOF' | tee -a "$RESULTS/cache-$name-changed.txt" >&2
import json, sys
def sets(p):
    r = json.load(open(p))
    return {frozenset(json.dumps(f["path"], sort_keys=True) for f in g["files"]) for g in r["groups"]}
a, b = sets(sys.argv[1]), sets(sys.argv[2])
print(f"groups: {len(a)} with the cache, {len(b)} without; identical: {a == b}")
sys.exit(0 if a == b else 1)
EOF
    fi
done

python3 - "$RESULTS" "${trees[@]}" <<'EOF'
import json, os, sys
results, trees = sys.argv[1], [t.split("=", 1)[0] for t in sys.argv[2:]]
def medians(path):
    if not os.path.exists(path):
        return {}
    return {r["command"]: r["median"] for r in json.load(open(path))["results"]}
print("| tree | condition | no cache | first --cache | ratio | rescan | speed-up |")
print("|---|---|---|---|---|---|---|")
for t in trees:
    for cond in ("warm", "cold"):
        m = medians(f"{results}/cache-{t}-{cond}.json")
        if m:
            n, f, r = m["nocache"], m["first"], m["rescan"]
            print(f"| {t} | {cond} | {n:.3f} s | {f:.3f} s | {f / n:.2f}x | {r:.3f} s | {n / r:.1f}x |")
    for cond in ("warm", "cold"):
        m = medians(f"{results}/cache-{t}-changed-{cond}.json")
        if m:
            n, r = m["changed-nocache"], m["changed-rescan"]
            print(f"| {t} | {cond}, 5 % added + 5 % modified | {n:.3f} s | | | {r:.3f} s | {n / r:.1f}x |")
for t in trees:
    p = f"{results}/cache-{t}-stats.txt"
    if os.path.exists(p):
        print(f"\n{t}: " + " / ".join(l.strip() for l in open(p) if l.strip()))
EOF
