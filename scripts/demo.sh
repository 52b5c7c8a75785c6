#!/bin/sh
# The main job on one machine: generate a sample photo library and show what
# lfsync makes of it. Called by `make demo` with the build directory.
set -eu
bin=${1:-.build/debug}
out=${DEMO_DIR:-$PWD/demo-out}
rm -rf "$out"
mkdir -p "$out"
export LFSYNC_HOME="$out/state"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Generating a sample library (Live Photos, RAW+JPEG, sidecars, videos, a corrupt HEIC, a symlink)"
"$bin/lfsync-bench" sample-library "$out/Pictures"

say "lfsync scan: what would be synced (first scan hashes everything)"
"$bin/lfsync" scan "$out/Pictures"

say "Rescan: unchanged files come from the scan cache, no file is read"
"$bin/lfsync" scan "$out/Pictures" >/dev/null

say "Rename every file and folder: content IDs stay the same"
mv "$out/Pictures" "$out/Renamed"
mv "$out/Renamed/DCIM/100APPLE" "$out/Renamed/DCIM/trip-to-the-sea"
for f in "$out/Renamed/Camera/"DSC_0100.*; do mv "$f" "$(echo "$f" | sed 's/DSC_0100/beach-sunset/')"; done
"$bin/lfsync" scan --json "$out/Renamed" | grep -o '"contentID" : "[0-9a-f]*"' | sort > "$out/after.txt"
mv "$out/Renamed" "$out/Pictures"
rm -rf "$out/Pictures.tmp"
"$bin/lfsync-bench" sample-library "$out/Original" >/dev/null
"$bin/lfsync" scan --json --no-cache "$out/Original" | grep -o '"contentID" : "[0-9a-f]*"' | sort > "$out/before.txt"
if cmp -s "$out/before.txt" "$out/after.txt"; then
  echo "all $(wc -l < "$out/after.txt") content IDs unchanged after renaming"
else
  echo "content IDs changed after renaming:" >&2
  diff "$out/before.txt" "$out/after.txt" >&2 || true
  exit 1
fi
