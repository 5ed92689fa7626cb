#!/bin/sh
# A stand-in for `dedup find -q PATH...` (runs fdupes with the same file selection), so that the
# benchmark scripts can be tested before the dedup binary works:  DEDUP=bench/standin-dedup.sh
[ "$1" = find ] && shift
[ "$1" = -q ] && shift
exec fdupes -r -q -n "$@"
