#!/bin/sh
# first_backup.sh BIN SRC: a fresh repository in /dev/shm, then a first backup of SRC into it.
set -e
R=/dev/shm/first-backup-repo-$$
rm -rf "$R"
export DEDUP_PASSWORD=bench
"$1" store -r "$R" init >/dev/null
"$1" store -r "$R" backup -q "$2"
rm -rf "$R"
