#!/bin/sh
# in-cgroup.sh CGROUP_DIR COMMAND [ARG]...: move this process into the cgroup (v1 blkio or v2 with
# io.max), then exec COMMAND, so that only the benchmarked process and its threads are throttled.
cg=$1
shift
echo $$ > "$cg/cgroup.procs" || { echo "in-cgroup.sh: cannot join $cg" >&2; exit 125; }
exec "$@"
