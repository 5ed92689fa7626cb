#!/usr/bin/env bash
# Install the peer tools the benchmark compares dedup against.
#   Debian packages: jdupes fdupes rdfind rmlint hyperfine xfsprogs time
#   cargo:           fclones, and yadf (issue 41's anchor) (built with `cargo install --locked`)
# Anything already present is skipped. Run as root (apt-get).
# Set CARGO_NICE=0 to build fclones without `nice -n 19`.
set -euo pipefail

pkgs=(jdupes fdupes rdfind rmlint hyperfine xfsprogs time)
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if ((${#missing[@]})); then
    echo "install-peers: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y "${missing[@]}"
else
    echo "install-peers: Debian packages already installed: ${pkgs[*]}"
fi

nice_cmd=(nice -n 19)
[[ "${CARGO_NICE:-1}" == 0 ]] && nice_cmd=()
for crate in fclones yadf; do
    if command -v "$crate" >/dev/null 2>&1; then
        echo "install-peers: $crate already installed: $("$crate" --version)"
    else
        echo "install-peers: cargo install --locked $crate"
        "${nice_cmd[@]}" cargo install --locked "$crate"
    fi
done

echo "install-peers: versions"
first_line() { local v; v=$("$@" 2>&1 || true); printf '%s\n' "${v%%$'\n'*}"; }
for t in jdupes fdupes rdfind rmlint hyperfine fclones yadf; do
    printf '  %-10s ' "$t"
    case $t in
        jdupes | rdfind) first_line "$t" -v ;;
        *) first_line "$t" --version ;;
    esac
done
printf '  %-10s ' mkfs.xfs; first_line mkfs.xfs -V
printf '  %-10s ' time; first_line /usr/bin/time --version
