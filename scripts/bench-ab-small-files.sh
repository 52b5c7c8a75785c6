#!/bin/bash
# Before/after of the 20,000-small-file push, alternating two release builds in
# pairs: each pair pushes the (indexed) library to a fresh journaled ext4 on a
# loop device, then pushes it again unchanged. `sync` before each timed push.
# BENCHMARKS.md, "Fewer hops per small file".
#
#   scripts/bench-ab-small-files.sh BEFORE_BIN_DIR AFTER_BIN_DIR [PAIRS] [WORK_DIR]
#
# Prints one line per pair and build ("before|after PAIR cold-s repeat-s
# receiver-CPU-s sender-CPU-s", CPU = user + system during the cold push), then the
# medians and the median of the paired ratios. Needs root (loop mount).
set -u
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd)
pairs=${3:-8}
w=${4:-$PWD/bench-out/ab-small}
[ "$(id -u)" = 0 ] || { echo "needs root: the receiver writes to a loop-mounted ext4" >&2; exit 1; }
source "$(dirname "$0")/small-files-setup.sh"
small_files_setup "$after" "$w" 18911 || exit 1
mnt=$w/disk; mkdir -p $mnt
now() { date +%s.%N; }
cpu_of() { awk -v tick=$(getconf CLK_TCK) '{print ($14 + $15) / tick}' /proc/$1/stat; }   # user + system seconds
results=$w/results.txt; : > $results
for pair in $(seq 1 $pairs); do
  for which in before after; do
    if [ $which = before ]; then bin=$before; else bin=$after; fi
    mountpoint -q $mnt && umount $mnt
    rm -f $w/disk.img; truncate -s 4G $w/disk.img; mkfs.ext4 -q -F $w/disk.img; mount -o loop $w/disk.img $mnt
    rm -rf $w/d1/state/libraries; mkdir -p $mnt/Pictures; : > $w/serve.log
    (LFSYNC_HOME=$w/d1/state exec "$bin/lfsync" serve $mnt/Pictures --listen 127.0.0.1:18911 --no-advertise >/dev/null 2>>$w/serve.log) &
    spid=$!
    for _ in $(seq 1 200); do grep -q "listening on" $w/serve.log && break; sleep 0.1; done
    sync; t0=$(now); r0=$(cpu_of $spid)
    LFSYNC_HOME=$w/laptop/state /usr/bin/time -f "%U %S" -o $w/push.cpu "$bin/lfsync" push $w/real --to d1 --batch >/dev/null \
      || echo "$which $pair: first push failed" >&2
    t1=$(now); r1=$(cpu_of $spid); sync; t2=$(now)
    LFSYNC_HOME=$w/laptop/state "$bin/lfsync" push $w/real --to d1 --batch >/dev/null || echo "$which $pair: repeat push failed" >&2
    t3=$(now)
    kill $spid; wait $spid 2>/dev/null; umount $mnt
    python3 -c "print('$which', $pair, round($t1 - $t0, 3), round($t3 - $t2, 3), round($r1 - $r0, 2), round(sum(map(float, open('$w/push.cpu').read().split()[-2:])), 2))" | tee -a $results
  done
done
rm -f $w/disk.img
python3 - $results <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for column, name in ((2, "indexed, cold"), (3, "repeat"), (4, "receiver CPU s, cold"), (5, "sender CPU s, cold")):
    b = [float(r[column]) for r in rows if r[0] == "before"]
    a = [float(r[column]) for r in rows if r[0] == "after"]
    ratios = [y / x for x, y in zip(b, a)]
    print(f"{name}: before median {statistics.median(b):.3f}, after median {statistics.median(a):.3f}, "
          f"paired ratio median {statistics.median(ratios):.3f}")
PY
