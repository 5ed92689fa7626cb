#!/usr/bin/env bash
# Install the peers of `dedup store` and `dedup sync` for the benchmarks in bench/store and
# bench/sync. Anything already present is skipped. Run as root.
#   Debian:        borgbackup, rsync, rclone, time
#   Go modules:    restic 0.18.1, kopia 0.19.0 (built in a scratch module, into /usr/local/bin)
#   cargo:         rustic-rs; bupstash (needs libsodium-dev and pkg-config); fcp and xcp, the
#                  parallel copiers bench/sync compares with (cargo install --locked, under
#                  nice -n 19 unless CARGO_NICE=0)
set -euo pipefail

pkgs=(borgbackup rsync rclone time libsodium-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "install-peers: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}"
fi

nice_cmd=(nice -n 19)
[[ "${CARGO_NICE:-1}" == 0 ]] && nice_cmd=()

# go_tool NAME MODULE PACKAGE VERSION: build PACKAGE (of MODULE) at VERSION into /usr/local/bin/NAME.
go_tool() {
    local name=$1 module=$2 package=$3 version=$4
    if [[ -x /usr/local/bin/$name ]]; then
        echo "install-peers: $name already installed"
        return
    fi
    local scratch
    scratch=$(mktemp -d)
    (
        cd "$scratch"
        go mod init scratch >/dev/null 2>&1
        "${nice_cmd[@]}" go get "$package@$version"
        "${nice_cmd[@]}" go build -o "/usr/local/bin/$name" "$package"
    )
    rm -rf "$scratch"
}
export PATH=$PATH:/usr/local/go/bin
go_tool restic github.com/restic/restic github.com/restic/restic/cmd/restic v0.18.1
go_tool kopia github.com/kopia/kopia github.com/kopia/kopia v0.19.0

# cargo_tool COMMAND CRATE: `cargo install --locked CRATE` unless COMMAND is on the PATH.
cargo_tool() {
    if command -v "$1" >/dev/null 2>&1; then
        echo "install-peers: $1 already installed"
    else
        "${nice_cmd[@]}" cargo install --locked "$2"
    fi
}
cargo_tool rustic rustic-rs
cargo_tool bupstash bupstash
cargo_tool fcp fcp
cargo_tool xcp xcp

echo "install-peers: versions"
for t in restic rustic kopia borg rsync rclone fcp xcp; do
    printf '  %-8s %s\n' "$t" "$("$t" --version 2>&1 | head -1)"
done
printf '  %-8s %s\n' bupstash "$(bupstash version 2>&1 | head -1)"
