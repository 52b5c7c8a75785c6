#!/bin/bash
# Profiles one push of a 20,000-small-file library (indexed, as scenario 10 of
# scripts/bench.sh) on both sides with `perf record -g`, the receiver writing to a
# fresh ext4 (root: loop mount). BENCHMARKS.md, "Where the time goes now".
#
#   scripts/profile-small-files.sh [RELEASE_BIN_DIR] [WORK_DIR]
#   perf report -i WORK_DIR/recv.data --children --sort sym    (send.data: the sender)
set -u
bin=$(cd "${1:-.build/release}" && pwd)
w=${2:-$PWD/bench-out/profile}
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root: the receiver writes to a loop-mounted ext4" >&2; exit 1; }
source "$(dirname "$0")/small-files-setup.sh"
small_files_setup "$bin" "$w" 18901 || exit 1
mnt=$w/disk; mkdir -p $mnt; mountpoint -q $mnt && umount $mnt; rm -f $w/disk.img
truncate -s 4G $w/disk.img; mkfs.ext4 -q -F $w/disk.img; mount -o loop $w/disk.img $mnt
rm -rf $w/d1/state/libraries; mkdir -p $mnt/Pictures
: > $w/serve.log
(LFSYNC_HOME=$w/d1/state exec "$bin/lfsync" serve $mnt/Pictures --listen 127.0.0.1:18901 --no-advertise >/dev/null 2>>$w/serve.log) &
spid=$!
for _ in $(seq 1 200); do grep -q "listening on" $w/serve.log && break; sleep 0.1; done
sync
perf record -F 999 -g -p $spid -o $w/recv.data 2>/dev/null &
ppid=$!
sleep 0.5
t0=$(date +%s.%N)
LFSYNC_HOME=$w/laptop/state perf record -F 999 -g -o $w/send.data "$bin/lfsync" push $w/real --to d1 --batch >/dev/null 2>$w/push.err
t1=$(date +%s.%N)
sleep 0.3
kill -INT $ppid; wait $ppid 2>/dev/null
kill $spid; wait $spid 2>/dev/null
echo "push took $(python3 -c "print($t1-$t0)") s"
umount $mnt
