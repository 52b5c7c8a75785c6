#!/usr/bin/env bash
# The systemd user units in contrib/systemd/ work as written: systemd-analyze accepts
# them, and their ExecStart lines, run as systemd would run them (%h = a fresh home,
# SIGTERM to stop), make a serve and a watch that carry a photo from one to the other.
# Inside a network namespace of its own (only loopback), so serve's [::]:7878 is
# never opened on the machine's interfaces.
#
#   Tests/Systemd/units.sh LFSYNC_BINARY UNIT_DIR
set -euo pipefail
unset LFSYNC_HOME XDG_DATA_HOME   # the units rely on the default state directory under %h
lfsync=$1
units=$2
work=$(mktemp -d /tmp/lfsync-units.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# The units as written, with only the binary's path pointed at this build. A user session
# has no network-online.target (the system manager's): no unit may wait for it.
for unit in lfsync-serve.service lfsync-watch.service lfsync-sync.service lfsync-push.service lfsync-push.timer; do
    sed "s#/usr/local/bin/lfsync#$lfsync#" "$units/$unit" >"$work/$unit"
    if grep -q 'network-online' "$work/$unit"; then echo "FAIL: $unit orders after network-online.target, which a user session lacks"; exit 1; fi
done
(cd "$work" && systemd-analyze verify --man=no lfsync-serve.service lfsync-watch.service lfsync-sync.service lfsync-push.service lfsync-push.timer)
# ExecStart as systemd runs it: %h is the user's home, nothing else is set up.
exec_start() { grep '^ExecStart=' "$work/$1" | cut -d= -f2- | sed "s#%h#$2#g"; }

ip link set lo up
nas=$work/nas-home laptop=$work/laptop-home
mkdir -p "$nas" "$laptop/Pictures"
HOME=$nas "$lfsync" init --name nas >/dev/null
HOME=$laptop "$lfsync" init --name laptop >/dev/null
for home in "$nas" "$laptop"; do
    [ -f "$home/.local/share/lfsync/identity.key" ] || { echo "FAIL: the state directory is not under HOME=$home"; exit 1; }
done
nas_id=$(HOME=$nas "$lfsync" id --json | sed -n 's/.*"deviceID" *: *"\([^"]*\)".*/\1/p')
laptop_id=$(HOME=$laptop "$lfsync" id --json | sed -n 's/.*"deviceID" *: *"\([^"]*\)".*/\1/p')
HOME=$nas "$lfsync" trust "$laptop_id" --name laptop --auto-accept >/dev/null
HOME=$laptop "$lfsync" trust "$nas_id" --name nas --address 127.0.0.1:7878 >/dev/null

# shellcheck disable=SC2046
HOME=$nas $(exec_start lfsync-serve.service "$nas") >"$work/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/serve.log" && break; sleep 0.1; done
grep -q "listening on" "$work/serve.log" || { echo "FAIL: serve did not listen"; cat "$work/serve.log"; exit 1; }
# The nightly push, as its timer starts it: one photo to nas, exit 0, nothing printed.
head -c 300000 /dev/urandom >"$laptop/Pictures/IMG_0000.JPG"
# shellcheck disable=SC2046
HOME=$laptop $(exec_start lfsync-push.service "$laptop") >"$work/push.log" 2>&1 || { echo "FAIL: the push service exited $?"; cat "$work/push.log"; exit 1; }
[ ! -s "$work/push.log" ] || { echo "FAIL: the batch push printed on success:"; cat "$work/push.log"; exit 1; }
cmp "$laptop/Pictures/IMG_0000.JPG" "$nas/Pictures/IMG_0000.JPG" || { echo "FAIL: the pushed photo did not arrive"; exit 1; }
# shellcheck disable=SC2046
HOME=$laptop $(exec_start lfsync-watch.service "$laptop") >"$work/watch.log" 2>&1 &
watch=$!
head -c 500000 /dev/urandom >"$laptop/Pictures/IMG_0001.JPG"
for _ in $(seq 1 300); do cmp -s "$laptop/Pictures/IMG_0001.JPG" "$nas/Pictures/IMG_0001.JPG" && break; sleep 0.1; done
cmp "$laptop/Pictures/IMG_0001.JPG" "$nas/Pictures/IMG_0001.JPG" || { echo "FAIL: the photo did not arrive"; cat "$work/watch.log" "$work/serve.log"; exit 1; }
kill -TERM "$watch" "$serve"
rc_watch=0 rc_serve=0
wait "$watch" || rc_watch=$?
wait "$serve" || rc_serve=$?
[ "$rc_watch" = 0 ] && [ "$rc_serve" = 0 ] || { echo "FAIL: exit after SIGTERM: watch $rc_watch, serve $rc_serve"; cat "$work/watch.log" "$work/serve.log"; exit 1; }
echo "PASS: the five units verify; serve created $nas/Pictures, the push service sent a photo to it and the watch another, both stopped with 0 on SIGTERM"
