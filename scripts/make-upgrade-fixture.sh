#!/bin/sh
# Writes Tests/LocalFirstSyncTests/Fixtures/unkeyed-hashes.tar.gz: two devices' state
# homes and libraries as the lfsync that hashed with unkeyed BLAKE2b-256 left them
# (protocol 3 before its hash change, commit 301f158), for UpgradeTests; pax format keeps
# mtimes to the nanosecond, as the scan cache recorded them. Kept as the
# record of how the fixture was made; it needs that commit's build to run.
#
#   scripts/make-upgrade-fixture.sh BUILD_DIR
#
# laptop pushed its library to nas (serve) and to desktop, which was never reached.
set -eu
bin=$(cd "${1:-.build/debug}" && pwd)
out=$(mktemp -d)
fixture=$(cd "$(dirname "$0")/.." && pwd)/Tests/LocalFirstSyncTests/Fixtures/unkeyed-hashes.tar.gz
as() { who=$1; shift; LFSYNC_HOME="$out/$who/state" "$bin/lfsync" "$@"; }
id_of() { as "$1" id --json | sed -n 's/.*"deviceID" : "\(.*\)".*/\1/p'; }

for name in laptop nas desktop; do mkdir -p "$out/$name/Pictures"; as $name init --name $name >/dev/null; done
lib="$out/laptop/Pictures"
"$bin/lfsync-bench" sample-library "$lib" --padding 2000 >/dev/null
rm -f "$lib/Documents/outside-link"
# What real libraries have beside the sample: copies in a second folder, one sidecar shared
# by several photos' edits, an empty file, and a file of several chunks.
mkdir -p "$lib/Backup/2019" "$lib/Edits"
cp -p "$lib"/Camera/DSC_0100.* "$lib/Backup/2019/"
printf 'preset: warm\n' > "$lib/Edits/a.xmp"; printf 'preset: warm\n' > "$lib/Edits/b.xmp"
head -c 3000 /dev/urandom > "$lib/Edits/a.jpg"; head -c 3000 /dev/urandom > "$lib/Edits/b.jpg"
: > "$lib/Documents/empty.txt"
head -c 450000 /dev/urandom > "$lib/Videos/long-clip.mp4"

as laptop trust "$(id_of nas)" --name nas --address 127.0.0.1:17999
as nas trust "$(id_of laptop)" --name laptop --auto-accept
as laptop trust "$(id_of desktop)" --name desktop --address 127.0.0.1:1
LFSYNC_HOME="$out/nas/state" "$bin/lfsync" serve --library "$out/nas/Pictures" --listen 127.0.0.1:17999 --no-advertise 2>/dev/null &
serve=$!
sleep 2
as laptop push "$lib" --to nas,desktop --json > "$out/push.json" || true
kill "$serve"; wait "$serve" 2>/dev/null || true
as laptop status "$lib" --json > "$out/status-laptop.json" || true
cat "$out/push.json" "$out/status-laptop.json"
rm -rf "$out/desktop"
tar --format=posix -C "$out" -czf "$fixture" laptop nas push.json status-laptop.json
rm -rf "$out"
ls -l "$fixture"
