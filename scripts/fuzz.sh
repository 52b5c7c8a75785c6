#!/usr/bin/env bash
# Runs every lfsync fuzz target under libFuzzer for a set time, then merges the new
# inputs worth keeping into Fuzz/corpus. Usage: fuzz.sh LFSYNC_FUZZ_BINARY SECONDS
set -uo pipefail
cd "$(dirname "$0")/.."
binary=$1 seconds=${2:-60}
work=.build/fuzz/work findings=.build/fuzz/findings
mkdir -p "$work" "$findings"
status=0
for target in $("$binary" --list); do
  mkdir -p "$work/$target" "Fuzz/corpus/$target"
  log="$work/$target.log"
  # The framer is fed in receives as small as one byte: long inputs only slow it down.
  case $target in noise-framer) max_len=8192 ;; *) max_len=65536 ;; esac
  "$binary" "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
    -artifact_prefix="$findings/$target-" -print_final_stats=1 "$work/$target" "Fuzz/corpus/$target" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -ne 0 ]; then
    echo "$target: FINDING after $runs runs (exit $rc): see $log and $findings/"
    status=1
  else
    echo "$target: $runs runs in ${seconds}s, $cov, nothing found"
  fi
  "$binary" "$target" -merge=1 "Fuzz/corpus/$target" "$work/$target" >>"$log" 2>&1 || true
done
exit $status
