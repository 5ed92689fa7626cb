#!/bin/sh
# Print where `cargo build --release` puts the dedup binary: .cargo/config.toml builds for an
# explicit target (the host), so it is target/<host tuple>/release/dedup. The default of DEDUP
# in run.sh, cache.sh and the Python helpers.
root=$(cd "$(dirname "$0")/.." && pwd)
host=$(rustc -vV | sed -n 's/^host: //p')
echo "$root/target/$host/release/dedup"
