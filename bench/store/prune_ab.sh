#!/bin/bash
# A/B of `dedup store prune` with nothing to free: two dedup binaries alternating on one
# synthetic repository per size (the `synthetic_repo` example), three rounds, wall seconds.
#   cargo build --release --example synthetic_repo
#   bench/store/prune_ab.sh BEFORE_BINARY AFTER_BINARY [SIZE...]
set -euo pipefail
before=$1 after=$2
shift 2
sizes=("${@:-1000000 10000000}")
root=$(cd "$(dirname "$0")/../.." && pwd)
gen=$root/target/x86_64-unknown-linux-gnu/release/examples/synthetic_repo
base=${AB_BASE:-/dev/shm/prune-ab}
for n in ${sizes[@]}; do
  rm -rf "$base"; mkdir -p "$base"
  "$gen" "$base/r$n" "$n" > /dev/null
  for round in 1 2 3; do
    for which in before after; do
      bin=$before; [ "$which" = after ] && bin=$after
      start=$(date +%s.%N)
      "$bin" store prune -q -r "$base/r$n"
      end=$(date +%s.%N)
      echo "$n $which $(echo "$end - $start" | bc)"
    done
  done
done
rm -rf "$base"
