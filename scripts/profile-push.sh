#!/bin/bash
# Where a 1 GiB push's CPU goes, both sides: one push of the `make bench` corpus to an empty
# receiver under `perf record` (cpu-clock, 999 Hz), then CPU seconds per kind of work. With
# FIRST=1 the sender forgets its index first (a first push of a never-scanned library: the
# sender cuts and hashes every byte too). "hashing + encryption" is BLAKE2b (libsodium, and
# libcrypto when it is the faster BLAKE2b), the AEAD (libcrypto) and FastCDC's scan: the
# figure BENCHMARKS.md's CPU-per-GiB target is about.
#
#   scripts/profile-push.sh [RELEASE_BIN_DIR]     (after `make bench` made bench-out/s9)
set -u
bin=$(cd "${1:-.build/release}" && pwd)
w=${BENCH_DIR:-$PWD/bench-out/s9}
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }
[ -d "$w/laptop/Pictures" ] || { echo "no corpus in $w: run make bench (or BENCH_TO=1 scripts/bench.sh) first" >&2; exit 1; }
pkill -f "lfsync serve $w/d1" 2>/dev/null; sleep 0.5
rm -rf "$w/d1/Pictures" "$w/d1/state/libraries"; mkdir -p "$w/d1/Pictures"; : > "$w/d1/serve.log"
(LFSYNC_HOME=$w/d1/state exec "$bin/lfsync" serve "$w/d1/Pictures" --listen 127.0.0.1:18801 --no-advertise \
  >/dev/null 2>>"$w/d1/serve.log") &
spid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$w/d1/serve.log" && break; sleep 0.1; done
[ -n "${FIRST:-}" ] && rm -rf "$w/laptop/state/libraries"
sync
perf record -e cpu-clock -F 999 -g -p $spid -o "$w/profile-recv.data" 2>/dev/null &
ppid=$!
sleep 0.5
t0=$(date +%s.%N)
LFSYNC_HOME=$w/laptop/state perf record -e cpu-clock -F 999 -g -o "$w/profile-send.data" \
  "$bin/lfsync" push "$w/laptop/Pictures" --to d1 --batch >/dev/null 2>&1
t1=$(date +%s.%N)
sleep 0.3
kill -INT $ppid; wait $ppid 2>/dev/null
kill $spid; wait $spid 2>/dev/null
bytes=$(du -sb --apparent-size "$w/laptop/Pictures" | cut -f1)
report() {   # report SIDE: CPU seconds in total and per kind
  perf report -i "$w/profile-$1.data" --no-children --sort dso,sym --stdio -q 2>/dev/null | python3 -c '
import re, sys
side, total_ns = sys.argv[1], 0
kinds = {"BLAKE2b (libsodium)": 0.0, "libcrypto (AEAD, BLAKE2b)": 0.0, "FastCDC": 0.0, "kernel": 0.0, "other": 0.0}
for line in sys.stdin:
    m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if not m: continue
    share, dso, sym = float(m.group(1)), m.group(2), m.group(4)
    if "libsodium" in dso: kinds["BLAKE2b (libsodium)"] += share
    elif "libcrypto" in dso: kinds["libcrypto (AEAD, BLAKE2b)"] += share
    elif "FastCDC" in sym: kinds["FastCDC"] += share
    elif "kernel" in dso: kinds["kernel"] += share
    else: kinds["other"] += share
print(side, " ".join(f"{k}={v:.1f}%" for k, v in kinds.items()))
' "$1"
  perf report -i "$w/profile-$1.data" --stdio 2>/dev/null | awk '/Event count/ {print "'"$1"' cpu_s=" $NF / 1e9}'
}
echo "push of $bytes bytes took $(python3 -c "print(round($t1 - $t0, 3))") s (under perf)"
report send
report recv
