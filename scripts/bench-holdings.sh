#!/usr/bin/env bash
# whereis / offload / pull-back / verify --repair on a real-shaped library, for one or two
# release builds alternating in one run (BENCHMARKS.md, "Acting only on what was proven").
#
#   scripts/bench-holdings.sh BUILD_DIR [BUILD_DIR...]   (root: the laptop's library sits on a
#                                                        loop-mounted ext4, for true bit rot)
# Knobs: HOLD_FILES (20000), HOLD_ROUNDS (2), HOLD_OUT (bench-out/holdings).
#
# Three devices on loopback (laptop, nas, desktop: each its own state and `serve`); the
# library is `lfsync-bench real-library` pushed to both; then, each timed with `sync` first:
# offload dry runs (without and with proof), offload --yes, pull from the nas bringing every
# file back, and verify --repair after one bit of five files was flipped in the disk image
# with the file system unmounted (bit rot: inode, size and times untouched). The deprecated
# `--library` spelling is used so that builds from before the PATH argument run too.
set -u
files=${HOLD_FILES:-20000}; rounds=${HOLD_ROUNDS:-2}
out=$(mkdir -p "${HOLD_OUT:-bench-out/holdings}" && cd "${HOLD_OUT:-bench-out/holdings}" && pwd)
builds=(); for b in "$@"; do builds+=("$(cd "$b" && pwd)"); done
[ ${#builds[@]} -gt 0 ] || { echo "usage: $0 BUILD_DIR [BUILD_DIR...]"; exit 64; }
[ "$(id -u)" = 0 ] || { echo "needs root (a loop-mounted ext4 for the bit rot)"; exit 77; }
results="$out/results.tsv"; : >"$results"

timed() {  # timed LABEL BUILD COMMAND...: seconds, appended to the results
  label=$1 build=$2; shift 2
  sync
  start=$(date +%s.%N)
  "$@" >"$out/last.out" 2>"$out/last.err"; rc=$?
  end=$(date +%s.%N)
  printf '%s\t%s\t%.2f\t%s\n' "$build" "$label" "$(echo "$end - $start" | bc)" "$rc" | tee -a "$results"
}

one_run() {  # one_run BUILD_DIR
  bin=$1; tag=$(basename "$(dirname "$(dirname "$bin")")")
  work=$(mktemp -d /tmp/lfsync-hold.XXXXXX)
  img="$work/laptop.img"; disk="$work/disk"; lib="$disk/Pictures"
  mkdir -p "$disk"; truncate -s 1G "$img"; mkfs.ext4 -q -F -b 4096 "$img"; mount -o loop "$img" "$disk"
  lf() { d=$1; shift; LFSYNC_HOME="$work/$d" "$bin/lfsync" "$@"; }
  for d in laptop nas desktop; do lf $d init --name $d >/dev/null; done
  id() { lf "$1" id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["deviceID"])'; }
  laptop=$(id laptop)
  port=19300; pids=""
  for d in nas desktop; do
    lf $d trust "$laptop" --name laptop --auto-accept --allow-pull >/dev/null
    mkdir -p "$work/$d-lib"
    (LFSYNC_HOME="$work/$d" exec "$bin/lfsync" serve --library "$work/$d-lib" --listen 127.0.0.1:$port --no-advertise 2>"$work/$d.log") &
    pids="$pids $!"
    lf laptop trust "$(id $d)" --name $d --address 127.0.0.1:$port >/dev/null
    port=$((port + 1))
  done
  sleep 1
  "$bin/lfsync-bench" real-library "$lib" --files "$files" >/dev/null
  find "$lib" -type f -exec touch -d '2 hours ago' {} +
  for d in nas desktop; do lf laptop push "$lib" --to $d --batch >/dev/null 2>&1 || echo "push to $d failed"; done
  sleep 4  # change times settled: the scans' records vouch for every file
  lf laptop scan "$lib" >/dev/null 2>&1
  timed "offload dry run, no proof" "$tag" lf laptop offload "$lib" --copies 2 --no-proof --json
  timed "offload dry run, with proof" "$tag" lf laptop offload "$lib" --copies 2 --json
  timed "offload --yes" "$tag" lf laptop offload "$lib" --copies 2 --yes --json
  python3 -c 'import json,sys,collections; r=json.load(open(sys.argv[1]))[0]; print(sys.argv[2] + ": kept", collections.Counter(k["reason"][:60] for k in r["kept"]).most_common(4))' "$out/last.out" "$tag" | tee -a "$out/notes.txt"
  removed=$(python3 -c 'import json,sys; print(sum(len(r["files"]) for r in json.load(open(sys.argv[1]))[0]["removed"]))' "$out/last.out" 2>/dev/null)
  timed "pull bringing $removed files back" "$tag" lf laptop pull --from nas --library "$lib"
  left=$(python3 - "$lib" <<'EOF'
import os, sys
n = 0
for root, dirs, names in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d != ".lfsync" and d != "lost+found"]
    n += len(names)
print(n)
EOF
)
  echo "$tag: $left files in the library after the pull" | tee -a "$out/notes.txt"
  sleep 4
  lf laptop scan "$lib" >/dev/null 2>&1
  # Five files rot under the file system.
  (cd "$lib" && find . -path ./.lfsync -prune -o -type f -size +20k -print | grep -v ' ' | sort | head -5 | sed 's|^\./||') >"$work/victims"
  umount "$disk"
  while IFS= read -r v; do
    size=$(debugfs -R "stat /Pictures/$v" "$img" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -1)
    off=$((size / 2)); blk=$(debugfs -R "bmap /Pictures/$v $((off / 4096))" "$img" 2>/dev/null)
    python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 16]))' "$img" $((blk * 4096 + off % 4096))
  done <"$work/victims"
  mount -o loop "$img" "$disk"
  timed "verify --repair, 5 files rotted" "$tag" lf laptop verify --library "$lib" --repair --json
  repaired=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("repaired") or []))' "$out/last.out" 2>/dev/null)
  echo "$tag: verify --repair healed $repaired of 5" | tee -a "$out/notes.txt"
  kill $pids 2>/dev/null; wait 2>/dev/null
  umount "$disk"; rm -rf "$work"
}

for round in $(seq 1 "$rounds"); do
  for build in "${builds[@]}"; do one_run "$build"; done
done
echo "results: $results"
