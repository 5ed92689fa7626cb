#!/usr/bin/env bash
# The Debian package, installed for real: builds it from the debug binary (scripts/deb.sh
# --debug: no release build), installs it with dpkg, checks `/usr/bin/dedup --version`, that
# `man dedup-store` renders, that the bash, zsh and fish completions are in place (and bash's
# loads), then purges it, leaving the machine as it was. Needs root, dpkg and man; without them
# it skips with a message, and fails when DEDUP_TEST_REQUIRE_ALL=1 (as CI sets). It also skips
# (or fails) rather than touch a dedup already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

skip() {
  if [ "${DEDUP_TEST_REQUIRE_ALL:-}" = 1 ]; then
    echo "deb-test: cannot run: $1 (DEDUP_TEST_REQUIRE_ALL=1)" >&2
    exit 1
  fi
  echo "SKIPPED deb-test: $1 (set DEDUP_TEST_REQUIRE_ALL=1 to make this a failure)" >&2
  exit 0
}
fail() {
  echo "deb-test: FAILED: $1" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || skip "dpkg -i needs root"
command -v dpkg >/dev/null 2>&1 || skip "no dpkg"
command -v man >/dev/null 2>&1 || skip "no man (man-db)"
command -v cargo-deb >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/cargo-deb" ] || skip "no cargo-deb"
if dpkg-query -W -f '${Status}' dedup 2>/dev/null | grep -q 'installed'; then
  skip "a package named dedup is installed already; it is not ours to remove"
fi

host=$(rustc -vV | sed -n 's/^host: //p')
if [ ! -x "${CARGO_TARGET_DIR:-target}/$host/debug/dedup" ]; then
  cargo build --locked -p dedup-cli --bin dedup
fi
deb=$(scripts/deb.sh --debug | tail -n 1)
[ -f "$deb" ] || fail "scripts/deb.sh made no package ($deb)"

# Every file the package brings must be new to this machine, so that purging it restores the
# machine exactly.
while read -r path; do
  if [ -e "$path" ]; then skip "$path exists already; installing would replace it"; fi
done < <(dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./|/|; /[^/]$/p')

cleanup() { dpkg --purge dedup >/dev/null 2>&1 || true; }
trap cleanup EXIT
dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb"

version=$(/usr/bin/dedup --version) || fail "/usr/bin/dedup --version"
[[ "$version" == "dedup "* ]] || fail "/usr/bin/dedup --version printed: $version"

page=$(MANPAGER=cat MANWIDTH=80 man dedup-store 2>&1) || fail "man dedup-store: $page"
grep -q "dedup-store" <<<"$page" || fail "man dedup-store rendered no page: $page"
grep -q "backup" <<<"$page" || fail "man dedup-store does not list backup: $page"
MANPAGER=cat man dedup-store-backup >/dev/null 2>&1 || fail "man dedup-store-backup"

for file in /usr/share/bash-completion/completions/dedup \
  /usr/share/zsh/vendor-completions/_dedup \
  /usr/share/fish/vendor_completions.d/dedup.fish; do
  [ -s "$file" ] || fail "$file missing or empty"
done
bash -c 'source /usr/share/bash-completion/completions/dedup && complete -p dedup' >/dev/null ||
  fail "the bash completion does not load"

dpkg --purge dedup >/dev/null || fail "dpkg --purge dedup"
trap - EXIT
if [ -e /usr/bin/dedup ]; then fail "/usr/bin/dedup still present after dpkg --purge"; fi
if dpkg-query -W -f '${Status}' dedup 2>/dev/null | grep -q 'installed'; then
  fail "dedup still installed after dpkg --purge"
fi
echo "deb-test: ok ($version, $(basename "$deb"))"
