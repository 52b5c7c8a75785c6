#!/bin/sh
# The main job on one machine: three devices (three state homes, three
# `lfsync serve` processes on loopback ports) and a laptop that pushes a
# sample photo library to them. Called by `make demo` with the build directory.
set -eu
bin=$(cd "${1:-.build/debug}" && pwd)
out=${DEMO_DIR:-$PWD/demo-out}
lfsync="$bin/lfsync"
rm -rf "$out"
mkdir -p "$out"
pids=""
cleanup() { for pid in $pids; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
as() { who=$1; shift; LFSYNC_HOME="$out/$who/state" "$lfsync" "$@"; }
device_id() { as "$1" id --json | sed -n 's/.*"deviceID" : "\(.*\)".*/\1/p'; }

say "Three devices and a laptop, each with its own identity (lfsync init)"
for name in laptop nas desktop spare; do
  mkdir -p "$out/$name/Pictures"
  as $name init --name $name >/dev/null
  printf '%-8s %s\n' "$name" "$(device_id $name)"
done

say "Pairing: the laptop trusts each device; each device trusts the laptop with --auto-accept"
port=17801
for name in nas desktop spare; do
  as laptop trust "$(device_id $name)" --name $name --address 127.0.0.1:$port
  as $name trust "$(device_id laptop)" --name laptop --auto-accept
  # Started directly (not through `as`), so that $! is the server itself and the trap stops it.
  LFSYNC_HOME="$out/$name/state" "$lfsync" serve "$out/$name/Pictures" --listen 127.0.0.1:$port --no-advertise \
    >/dev/null 2>"$out/$name/serve.log" &
  pids="$pids $!"
  port=$((port + 1))
done

say "A sample library on the laptop: Live Photos, RAW+JPEG, sidecars, videos"
"$bin/lfsync-bench" sample-library "$out/laptop/Pictures" >/dev/null
rm -f "$out/laptop/Pictures/Documents/outside-link"
as laptop scan "$out/laptop/Pictures" | head -12
echo "..."
sleep 1

say "lfsync push --to nas,desktop: one progress line per peer"
as laptop push "$out/laptop/Pictures" --to nas,desktop --progress plain

say "lfsync status on the laptop and on the NAS"
as laptop status
as nas status

say "Push again, nothing changed: 0 bytes move"
as laptop push "$out/laptop/Pictures" --to nas,desktop

say "Rename the folders on the laptop and push: the devices copy from what they have, ~0 bytes move"
mv "$out/laptop/Pictures/DCIM" "$out/laptop/Pictures/iPhone"
mv "$out/laptop/Pictures/Camera" "$out/laptop/Pictures/Nikon Z6"
as laptop push "$out/laptop/Pictures" --to nas,desktop

say "From cron: push --batch to every trusted device (quiet on success, exit code for the script)"
as laptop push "$out/laptop/Pictures" --all --batch && echo "exit code 0: every device confirmed every asset"

say "Byte-exact: every file of the laptop's library is on every device (cmp)"
for name in nas desktop spare; do
  missing=0
  for file in $(cd "$out/laptop/Pictures" && find . -type f | sed 's|^\./||' | tr ' ' '\001'); do
    file=$(printf '%s' "$file" | tr '\001' ' ')
    cmp -s "$out/laptop/Pictures/$file" "$out/$name/Pictures/$file" || { echo "$name: $file differs or is missing"; missing=$((missing + 1)); }
  done
  [ "$missing" -eq 0 ] && echo "$name: all $(cd "$out/laptop/Pictures" && find . -type f | wc -l) files identical"
  [ "$missing" -eq 0 ] || exit 1
done

say "What the NAS logged"
cat "$out/nas/serve.log"
