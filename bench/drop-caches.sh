#!/bin/sh
# hyperfine --prepare for the cold and hdd conditions: write back dirty pages, drop page cache,
# dentries and inodes. Needs root.
sync
echo 3 > /proc/sys/vm/drop_caches
