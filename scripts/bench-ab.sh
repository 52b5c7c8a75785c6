#!/usr/bin/env bash
# Before/after benchmarks of two release builds, alternating in one session, `sync`
# before each run, so the machine's drift hits both alike (BENCHMARKS.md).
#
#   scripts/bench-ab.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [OUT_DIR]
#
# e.g. git worktree add /tmp/before <commit> && (cd /tmp/before && swift build -c release)
#      make release && scripts/bench-ab.sh /tmp/before/.build/release .build/release
set -u
before=$(cd "$1" && pwd); after=$(cd "$2" && pwd)
out=$(mkdir -p "${3:-bench-out/ab}" && cd "${3:-bench-out/ab}" && pwd)
build() { if [ "$1" = before ]; then echo "$before"; else echo "$after"; fi; }
for round in 1 2; do
  for which in before after; do
    bin=$(build $which)
    sync; "$bin/lfsync-bench" broadcast > "$out/broadcast-$which-$round.txt" 2>&1
    sync; "$bin/lfsync-bench" content > "$out/content-$which-$round.txt" 2>&1
    sync; "$bin/lfsync-bench" channel > "$out/channel-$which-$round.txt" 2>&1
  done
done
for round in 1 2; do
  for which in before after; do
    BENCH_FROM=1 BENCH_TO=2 BENCH_REPS=3 bash scripts/bench.sh "$(build $which)" > "$out/cold-$which-$round.txt" 2>&1
    cp bench-out/s9/results.md "$out/cold-$which-$round.md"
  done
done
for which in before after; do
  BENCH_FROM=10 BENCH_TO=10 BENCH_REPS=3 bash scripts/bench.sh "$(build $which)" > "$out/small-$which.txt" 2>&1
  cp bench-out/s9/results.md "$out/small-$which.md"
done
grep -h "3-peer" "$out"/broadcast-*.txt
grep -h "rescan\|2 cores (as" "$out"/content-*.txt
for f in "$out"/channel-*.txt; do echo "== $f"; tail -4 "$f"; done
cat "$out"/cold-*.md "$out"/small-*.md | grep -v '^|---\|^| scenario'
