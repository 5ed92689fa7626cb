#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests. README and .ci/run use it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The Debian package: built from the debug binary, installed, checked, purged (root only).
scripts/deb-test.sh
