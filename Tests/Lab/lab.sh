#!/bin/bash
# The multi-device lab: three "devices" (a, b, c), each a network namespace
# with its own hostname, tmpfs /run, system D-Bus, avahi-daemon, LFSYNC_HOME
# and library, joined by veth pairs to a bridge in a fourth namespace. Every
# device runs `lfsync serve`; device a discovers b and c over real DNS-SD, then
# the scenarios push to them while the lab injects faults.
#
#   usage: lab.sh [LFSYNC-BINARY [LFSYNC-BENCH-BINARY [LFSYNC-HOSTILE-PEER-BINARY]]]
#          (defaults: $LFSYNC_BINARY / $LFSYNC_BENCH_BINARY, else .build/debug)
#   exit:  0 every scenario passed, 1 a scenario failed, 77 skipped (reason on stdout)
#
# Root only. Nothing runs on the machine's real interfaces: the veth pairs are
# created inside the lab's namespaces, avahi and every packet stay there, and
# everything is removed on exit (also on failure or Ctrl-C). Names include the
# PID, so runs never collide.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LFSYNC=${1:-${LFSYNC_BINARY:-$ROOT/.build/debug/lfsync}}
BENCH=${2:-${LFSYNC_BENCH_BINARY:-$(dirname "$LFSYNC")/lfsync-bench}}
HOSTILE=${3:-${LFSYNC_HOSTILE_PEER:-$(dirname "$LFSYNC")/lfsync-hostile-peer}}
DISCOVERY_TIMEOUT=${LAB_DISCOVERY_TIMEOUT:-30}
PORT=7878

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$LFSYNC" ] || skip "lfsync binary not found ($LFSYNC); run swift build"
[ -x "$BENCH" ] || skip "lfsync-bench binary not found ($BENCH); run swift build"
[ -x "$HOSTILE" ] || skip "lfsync-hostile-peer binary not found ($HOSTILE); run swift build"
[ "$(id -u)" = 0 ] || skip "the lab needs root (network namespaces)"
for tool in ip tc unshare nsenter mount hostname dbus-daemon avahi-daemon jq cmp timeout; do
    command -v "$tool" >/dev/null 2>&1 ||
        skip "$tool is missing; 'make lab-deps' installs avahi-daemon, dbus, iproute2 and jq"
done

P="lfs-$$"
NS_BR="$P-br"
DEVICES="a b c"
WORK=$(mktemp -d "/tmp/lfsync-lab.XXXXXX")
START_ALL=$(date +%s)

. "$ROOT/Tests/Lab/netns.sh"

cleanup() {
    status=$?
    trap - EXIT INT TERM
    # The repair row keeps a library of a's on a loop-mounted disk, in a's mount namespace
    # (which would release it with its last process anyway).
    [ -n "${ROTDISK:-}" ] && on a umount -l "$ROTDISK" 2>/dev/null
    for d in $DEVICES; do stop_namespace "$P-$d"; done
    stop_namespace "$NS_BR"
    rm -rf "$WORK"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- topology
ip netns add "$NS_BR" 2>"$WORK/err" || skip "ip netns does not work here: $(cat "$WORK/err")"
ip -n "$NS_BR" link add br0 type bridge || exit 1
ip -n "$NS_BR" link set lo up && ip -n "$NS_BR" link set br0 up || exit 1
n=1
for d in $DEVICES; do
    ns="$P-$d"
    ip netns add "$ns" || exit 1
    # Created inside the namespaces: the pair never exists on the host.
    ip -n "$ns" link add lab0 type veth peer name "v$d" netns "$NS_BR" || exit 1
    ip -n "$NS_BR" link set "v$d" master br0 up || exit 1
    ip -n "$ns" address add "10.232.0.$n/24" dev lab0 || exit 1
    ip -n "$ns" link set lo up && ip -n "$ns" link set lab0 up || exit 1
    eval "IP_$d=10.232.0.$n"
    n=$((n + 1))
done

# Each device: a holder process in its netns + private mount and UTS
# namespaces, with tmpfs /run, its own D-Bus and avahi-daemon. Later commands
# join it with nsenter, so they reach that device's avahi.
for d in $DEVICES; do
    mkdir -p "$WORK/$d/home" "$WORK/$d/lib"
    ip netns exec "$P-$d" unshare -m -u sh -c "$LAB_DEVICE_INIT"'
        echo ready
        exec sleep 100000' "lab-$d" >"$WORK/$d/holder.log" 2>&1 &
    eval "HOLDER_$d=$!"
done
for d in $DEVICES; do
    for _ in $(seq 1 100); do grep -q ready "$WORK/$d/holder.log" 2>/dev/null && break; sleep 0.1; done
    grep -q ready "$WORK/$d/holder.log" || { echo "FAIL: device $d did not start:"; cat "$WORK/$d/holder.log"; exit 1; }
done

# on DEVICE COMMAND...: run inside the device (net, mount and UTS namespaces) as that device.
on() {
    d=$1; shift
    eval "h=\$HOLDER_$d"
    nsenter -t "$h" -n -m -u -- env LFSYNC_HOME="$WORK/$d/home" AVAHI_COMPAT_NOWARN=1 "$@"
}
# bg_push OUT ARGS...: `lfsync push` on a in the background; $! is lfsync itself.
bg_push() {
    out=$1; shift
    nsenter -t "$HOLDER_a" -n -m -u -- env LFSYNC_HOME="$WORK/a/home" AVAHI_COMPAT_NOWARN=1 \
        "$LFSYNC" push "$@" --batch --json >"$WORK/$out.out" 2>"$WORK/$out.err" &
}
# wait_push PID SECONDS: its exit status, or 124 after killing it when it overruns.
wait_push() {
    t=0
    while kill -0 "$1" 2>/dev/null && [ $t -lt $(($2 * 2)) ]; do sleep 0.5; t=$((t + 1)); done
    kill -0 "$1" 2>/dev/null && { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 124; }
    wait "$1"
}
lf() { d=$1; shift; on "$d" timeout -k 5 "${LAB_CMD_TIMEOUT:-120}" "$LFSYNC" "$@"; }

start_serve() {
    d=$1
    eval "lib=\${LIB_$d:-\$WORK/\$d/lib} h=\$HOLDER_$d"
    before=$(grep -c "listening on" "$WORK/$d/serve.log" 2>/dev/null)
    # A simple command in the background: $! is lfsync itself (nsenter and env exec).
    # SERVE_NOFILE: the open-file limit to serve under (the shell execs lfsync, so $! stays lfsync).
    nsenter -t "$h" -n -m -u -- env LFSYNC_HOME="$WORK/$d/home" AVAHI_COMPAT_NOWARN=1 \
        sh -c 'ulimit -n "$1" && shift && exec "$@"' serve "${SERVE_NOFILE:-1024}" \
        "$LFSYNC" serve "$lib" --listen "0.0.0.0:$PORT" >>"$WORK/$d/serve.log" 2>&1 &
    eval "SERVE_$d=$!"
    for _ in $(seq 1 100); do
        [ "$(grep -c "listening on" "$WORK/$d/serve.log" 2>/dev/null)" -gt "${before:-0}" ] && return 0
        sleep 0.1
    done
    echo "serve on $d did not listen:"; cat "$WORK/$d/serve.log"; return 1
}
stop_serve() {
    d=$1 sig=${2:-TERM}
    eval "pid=\$SERVE_$d"
    kill "-$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}

RESULTS=""
FAILED=0
record() {  # record NAME PASS|FAIL BYTES NOTE
    printf '%-4s %-22s %s  %s\n' "$2" "$1" "$3" "$4"
    RESULTS="$RESULTS$(printf '%-22s %-4s %14s  %s' "$1" "$2" "$3" "$4")
"
    [ "$2" = FAIL ] && FAILED=1
}
dump_logs() {
    for f in "$WORK"/*/serve.log "$WORK"/*.out "$WORK"/*.err; do
        [ -f "$f" ] || continue
        echo "--- ${f#$WORK/}"; tail -n 15 "$f"
    done
}
# same DIR1 DIR2: byte-exact (regular files and layout), ignoring .lfsync
same() {
    (cd "$1" && find . -path ./.lfsync -prune -o -type f -print | sort) >"$WORK/l1"
    (cd "$2" && find . -path ./.lfsync -prune -o -type f -print | sort) >"$WORK/l2"
    cmp -s "$WORK/l1" "$WORK/l2" || { echo "file lists differ: $(diff "$WORK/l1" "$WORK/l2" | grep '^[<>]' | head -3 | tr '\n' ' ')"; return 1; }
    while read -r f; do cmp -s "$1/$f" "$2/$f" || { echo "differs: $f"; return 1; }; done <"$WORK/l1"
    return 0
}
peer_bytes() { jq -r --arg p "$2" '[.. | objects | select(has("chunkBytesSent")) | select((.peer // .name // "") == $p or (tostring | contains($p)))][0].chunkBytesSent // 0' "$1" 2>/dev/null; }
lib_bytes() { du -sb --exclude=.lfsync "$1" 2>/dev/null | cut -f1; }

# ---------------------------------------------------------------- identities
for d in $DEVICES; do
    lf "$d" init --name "$d" >/dev/null 2>"$WORK/init.err" || { echo "FAIL: init on $d: $(cat "$WORK/init.err")"; exit 1; }
    eval "ID_$d=\$(lf $d id --json | jq -r .deviceID)"
done
for d in b c; do
    lf "$d" trust "$ID_a" --name a --auto-accept >/dev/null 2>&1 || exit 1
    eval "id=\$ID_$d"; lf a trust "$id" --name "$d" >/dev/null 2>&1 || exit 1
done
for d in $DEVICES; do start_serve "$d" || exit 1; done

# ---------------------------------------------------------------- discovery
T0=$(date +%s)
ok=0
while [ $(( $(date +%s) - T0 )) -lt "$DISCOVERY_TIMEOUT" ]; do
    lf a peers --timeout 3 --json >"$WORK/peers.json" 2>"$WORK/peers.err"
    if jq -e --arg b "$ID_b" --arg c "$ID_c" --arg ib "$IP_b" --arg ic "$IP_c" '
        (map(select(.deviceID == $b and .name == "b" and (.address | tostring | contains($ib)))) | length > 0) and
        (map(select(.deviceID == $c and .name == "c" and (.address | tostring | contains($ic)))) | length > 0)' \
        "$WORK/peers.json" >/dev/null 2>&1; then ok=1; break; fi
done
if [ $ok = 1 ]; then
    record discovery PASS - "a sees b and c (name, ID, address) after $(( $(date +%s) - T0 ))s"
else
    record discovery FAIL - "a did not see b and c within ${DISCOVERY_TIMEOUT}s: $(cat "$WORK/peers.json" "$WORK/peers.err" | head -c 600)"
    dump_logs
fi

# Helpers for the scenarios.
pb() { jq -r --arg p "$2" '[.peers[]? | select(.peer == $p) | .chunkBytesSent][0] // 0' "$1" 2>/dev/null || echo 0; }
pstate() { jq -r --arg p "$2" '[.peers[]? | select(.peer == $p) | .state][0] // "none"' "$1" 2>/dev/null || echo none; }
st() { lf a status --json 2>/dev/null | jq -r --arg p "$1" --arg f "$2" '[.[] | select(.peer == $p) | .[$f]][0] // 0'; }
# fresh_lib DEVICE NAME: restart DEVICE's serve on a new, empty library (each
# scenario sends new content, and a library never overwrites a different file).
fresh_lib() {
    stop_serve "$1"
    mkdir -p "$WORK/$1/$2"
    eval "LIB_$1=\$WORK/\$1/\$2"
    start_serve "$1"
}
# Throttle a's uplink so a transfer can be caught midway.
throttle() { tc -n "$P-a" qdisc replace dev lab0 root tbf rate "$1" burst 32kb latency 400ms; }  # tbf: works without sch_netem
unthrottle() { tc -n "$P-a" qdisc del dev lab0 root 2>/dev/null; }
sample() {  # sample DIR PADDING
    "$BENCH" sample-library "$1" --padding "$2" >/dev/null 2>&1 || return 1
    rm -f "$1/Documents/outside-link"
}
wait_bytes() {  # wait_bytes DIR BYTES SECONDS: until DIR (staging included) holds BYTES
    end=$(( $(date +%s) + $3 ))
    while [ "$(date +%s)" -lt "$end" ]; do
        [ "$(du -s --block-size=1 "$1" 2>/dev/null | cut -f1)" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# ---------------------------------------------------------------- broadcast
SRC="$WORK/src"
sample "$SRC" 200000 || { echo "FAIL: lfsync-bench sample-library"; exit 1; }
NASSETS=$(find "$SRC" -type f | wc -l)
TOTAL=$(du -sb "$SRC" | cut -f1)
for d in b c; do fresh_lib "$d" lib-broadcast || exit 1; done
lf a push "$SRC" --to b,c --batch --json >"$WORK/broadcast.out" 2>"$WORK/broadcast.err"; rc=$?
bytes=$(( $(pb "$WORK/broadcast.out" b) + $(pb "$WORK/broadcast.out" c) ))
why=""
[ $rc = 0 ] || why="$why push exit $rc;"
for d in b c; do
    eval "lib=\$LIB_$d"
    m=$(same "$SRC" "$lib") || why="$why $d not byte-exact ($m);"
    [ "$(st $d failed)" = 0 ] && [ "$(st $d synced)" -gt 0 ] && [ "$(st $d pending)" = 0 ] || why="$why status for $d not all synced;"
done
if [ -z "$why" ]; then
    record broadcast PASS "$bytes" "$(find "$SRC" -type f | wc -l) files (Live Photo pairs) to b,c via DNS-SD; byte-exact; status synced"
else
    record broadcast FAIL "$bytes" "$why $(head -c 300 "$WORK/broadcast.err")"; dump_logs
fi

# ---------------------------------------------------------------- kill -9 receiver
BIG="$WORK/big"
sample "$BIG" 1000000 || exit 1
BIGTOTAL=$(du -sb "$BIG" | cut -f1)
BIGFILES=$(find "$BIG" -type f | wc -l)
fresh_lib b lib-kill || exit 1
throttle 40mbit
bg_push kill1 "$BIG" --to b
PUSH=$!
why=""
if wait_bytes "$LIB_b" $((BIGTOTAL / 2)) 60; then
    stop_serve b KILL
    have=$(du -s --block-size=1 "$LIB_b" | cut -f1)
else
    why="receiver never reached 50%;"; have=0
fi
wait_push $PUSH 60; rc1=$?
unthrottle
start_serve b || exit 1
lf a push "$BIG" --to b --batch --json >"$WORK/kill2.out" 2>"$WORK/kill2.err"; rc2=$?
b1=$(pb "$WORK/kill1.out" b); b2=$(pb "$WORK/kill2.out" b)
missing=$((BIGTOTAL - have)); [ $missing -ge 0 ] || missing=0; limit=$((missing + BIGFILES * 1048576))
[ $rc1 != 0 ] || why="$why first push did not notice the kill;"
[ $rc2 = 0 ] || why="$why second push exit $rc2;"
m=$(same "$BIG" "$LIB_b") || why="$why not byte-exact ($m);"
[ "$b2" -le "$limit" ] || why="$why second push sent more than missing + 1 MiB per file;"
note="killed when b held $have of $BIGTOTAL B on disk incl. staging (push1 exit $rc1, sent $b1); push2 sent $b2 <= missing $missing + $BIGFILES MiB"
if [ -z "$why" ]; then record kill-9-resume PASS "$((b1 + b2))" "$note"
else record kill-9-resume FAIL "$((b1 + b2))" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- link down
MID="$WORK/mid"
sample "$MID" 500000 || exit 1
MIDTOTAL=$(du -sb "$MID" | cut -f1)
for d in b c; do fresh_lib "$d" lib-link || exit 1; done
throttle 40mbit
bg_push link1 "$MID" --to b,c
PUSH=$!
why=""
wait_bytes "$LIB_c" $((MIDTOTAL / 3)) 60 || why="c never reached a third;"
ip -n "$P-c" link set lab0 down
T0=$(date +%s)
wait_push $PUSH "${LAB_LINK_DOWN_TIMEOUT:-60}"; rc1=$?
[ $rc1 != 124 ] || why="$why push still running ${LAB_LINK_DOWN_TIMEOUT:-60}s after c's link went down (killed);"
tdown=$(( $(date +%s) - T0 ))
unthrottle
ip -n "$P-c" link set lab0 up
sleep 1
s_b=$(pstate "$WORK/link1.out" b); s_c=$(pstate "$WORK/link1.out" c)
[ "$rc1" = 1 ] || [ "$rc1" = 69 ] || why="$why first push exit $rc1 (want 1 or 69);"
[ "$s_b" = completed ] || why="$why b state $s_b;"
[ "$s_c" != completed ] || why="$why c completed although its link was down;"
bexact=yes; m=$(same "$MID" "$LIB_b") || { bexact=no; why="$why b not byte-exact ($m);"; }
[ "$(st c failed)" -gt 0 ] 2>/dev/null || [ "$(st c pending)" -gt 0 ] 2>/dev/null || why="$why status does not show c failed;"
lf a push "$MID" --to c --batch --json >"$WORK/link2.out" 2>"$WORK/link2.err"; rc2=$?
[ $rc2 = 0 ] || why="$why second push to c exit $rc2;"
m=$(same "$MID" "$LIB_c") || why="$why c not byte-exact after link up ($m);"
c1=$(pb "$WORK/link1.out" c); c2=$(pb "$WORK/link2.out" c); b1=$(pb "$WORK/link1.out" b)
[ $((c1 + c2)) -le $((MIDTOTAL + $(find "$MID" -type f | wc -l) * 1048576)) ] || why="$why c resend too large;"
note="push1 exit $rc1 after link down (${tdown}s), b byte-exact: $bexact; b $s_b ($b1 B), c $s_c ($c1 B); push2 to c sent $c2 of $MIDTOTAL"
if [ -z "$why" ]; then record link-down PASS "$((b1 + c1 + c2))" "$note"
else record link-down FAIL "$((b1 + c1 + c2))" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- loss + delay
# Both directions of b's link: b's end and the bridge's end of its veth. With
# sch_netem: 2% loss and 20 ms delay. Without it (this kernel class has none):
# 2% loss from nftables' random number generator on both ingress hooks, and a
# 40 Mbit/s tbf bottleneck whose queue delays packets by up to 100 ms.
fresh_lib b lib-netem || exit 1
NET="$WORK/net"
sample "$NET" 300000 || exit 1
LOSS_MODE=""
if tc -n "$P-b" qdisc add dev lo root netem delay 1ms 2>"$WORK/netem-probe.err"; then
    tc -n "$P-b" qdisc del dev lo root 2>/dev/null
    LOSS_MODE=netem
    tc -n "$P-b" qdisc add dev lab0 root netem loss 2% delay 20ms
    tc -n "$NS_BR" qdisc add dev vb root netem loss 2% delay 20ms
elif command -v nft >/dev/null 2>&1; then
    LOSS_MODE=nft
    for side in "$P-b lab0" "$NS_BR vb"; do
        set -- $side
        printf 'table netdev lab {\n chain loss {\n  type filter hook ingress device "%s" priority 0;\n  numgen random mod 100 < 2 counter drop\n }\n}\n' "$2" |
            ip netns exec "$1" nft -f - 2>>"$WORK/netem-probe.err" || LOSS_MODE=""
        tc -n "$1" qdisc replace dev "$2" root tbf rate 40mbit burst 32kb latency 100ms
    done
fi
if [ -z "$LOSS_MODE" ]; then
    for side in "$P-b lab0" "$NS_BR vb"; do
        set -- $side
        ip netns exec "$1" nft delete table netdev lab 2>/dev/null
        tc -n "$1" qdisc del dev "$2" root 2>/dev/null
    done
    record loss-delay SKIP - "neither tc netem nor nftables works here: $(head -c 120 "$WORK/netem-probe.err")"
else
    T0=$(date +%s)
    lf a push "$NET" --to b --batch --json >"$WORK/netem.out" 2>"$WORK/netem.err"; rc=$?
    secs=$(( $(date +%s) - T0 ))
    drops=0
    for side in "$P-b lab0" "$NS_BR vb"; do
        set -- $side
        if [ $LOSS_MODE = netem ]; then
            n=$(tc -s -n "$1" qdisc show dev "$2" | grep -o 'dropped [0-9]*' | head -1 | cut -d' ' -f2)
        else
            n=$(ip netns exec "$1" nft list table netdev lab 2>/dev/null | grep -o 'packets [0-9]*' | head -1 | cut -d' ' -f2)
            ip netns exec "$1" nft delete table netdev lab 2>/dev/null
        fi
        drops=$((drops + ${n:-0}))
        tc -n "$1" qdisc del dev "$2" root 2>/dev/null
    done
    why=""
    [ $rc = 0 ] || why="push exit $rc;"
    m=$(same "$NET" "$LIB_b") || why="$why not byte-exact ($m);"
    [ "$drops" -gt 0 ] || why="$why no packet was dropped (the fault did not apply);"
    bytes=$(pb "$WORK/netem.out" b)
    if [ $LOSS_MODE = netem ]; then how="2% loss + 20 ms delay both ways (netem)"
    else how="2% loss both ways (nftables) + 40 Mbit/s bottleneck, <=100 ms queueing delay (tbf; no sch_netem in this kernel)"; fi
    if [ -z "$why" ]; then record loss-delay PASS "$bytes" "$how: $drops packets dropped, byte-exact in ${secs}s"
    else record loss-delay FAIL "$bytes" "$why $how; $(head -c 300 "$WORK/netem.err")"; dump_logs; fi
fi

# ---------------------------------------------------------------- disk full
stop_serve c
mkdir -p "$WORK/c/full"
on c mount -t tmpfs -o size=3m tmpfs "$WORK/c/full" || exit 1   # only in c's mount namespace
LIB_c="$WORK/c/full"; start_serve c || exit 1
FULL="$WORK/fullsrc"
sample "$FULL" 150000 || exit 1
lf a push "$FULL" --to c --batch --json >"$WORK/full.out" 2>"$WORK/full.err"; rc=$?
why=""
# The receiver refuses the offer for lack of room: a failure there (exit 1), not a decline (77).
[ $rc = 1 ] || why="push exited $rc on a 3 MiB library, expected 1;"
mkdir -p "$WORK/c/fullcopy"
on c tar -C "$WORK/c/full" --exclude=./.lfsync -cf - . | tar -C "$WORK/c/fullcopy" -xf -
partial=0
for f in $(cd "$WORK/c/fullcopy" && find . -type f); do
    cmp -s "$FULL/$f" "$WORK/c/fullcopy/$f" || { partial=1; why="$why partial or wrong file in library: $f;"; }
done
reason=$(jq -r '[.peers[]? | select(.peer == "c") | (.state, (.failures | to_entries[]? | .value | tostring)) | select(. != "completed")][0] // empty' "$WORK/full.out" 2>/dev/null)
printf %s "$reason" | grep -q "space" || why="$why no clear free-space error in push result;"
[ "$(st c failed)" -gt 0 ] 2>/dev/null || why="$why sender status does not show c failed;"
lf a status --json -v >"$WORK/full-status.json" 2>&1
freason=$(grep -o '"[^"]*space[^"]*"' "$WORK/full-status.json" | head -1)
[ -n "$freason" ] || why="$why no free-space reason in sender's status --json -v;"
bytes=$(pb "$WORK/full.out" c)
note="exit $rc; push: $reason; ledger: $freason"
if [ -z "$why" ]; then record disk-full PASS "$bytes" "$note"
else record disk-full FAIL "$bytes" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- disk fills mid-transfer
# The offer fits, then another writer fills c's 12 MiB library while chunks arrive.
stop_serve c
mkdir -p "$WORK/c/full2"
on c mount -t tmpfs -o size=12m tmpfs "$WORK/c/full2" || exit 1
LIB_c="$WORK/c/full2"; start_serve c || exit 1
FULL2="$WORK/fullsrc2"
sample "$FULL2" 250000 || exit 1
throttle 20mbit
bg_push full2 "$FULL2" --to c
PUSH=$!
sleep 1.5
on c sh -c "mkdir -p '$LIB_c/.lfsync' && dd if=/dev/zero of='$LIB_c/.lfsync/lab-filler' bs=64k >/dev/null 2>&1"
wait_push $PUSH 60; rc=$?
unthrottle
why=""
filler=$(on c stat -c %s "$LIB_c/.lfsync/lab-filler" 2>/dev/null)
rm -rf "$WORK/c/fullcopy2"; mkdir -p "$WORK/c/fullcopy2"
on c tar -C "$LIB_c" --exclude=./.lfsync -cf - . | tar -C "$WORK/c/fullcopy2" -xf -
for f in $(cd "$WORK/c/fullcopy2" && find . -type f); do
    cmp -s "$FULL2/$f" "$WORK/c/fullcopy2/$f" || why="$why partial or wrong file in library: $f;"
done
stored=$(cd "$WORK/c/fullcopy2" && find . -type f | wc -l)
reason=$(jq -r '[.peers[]? | select(.peer == "c") | (.state, (.failures | to_entries[]? | .value | tostring)) | select(. != "completed")] | unique | join(" / ")' "$WORK/full2.out" 2>/dev/null | head -c 200)
# Either the receiver reserved the space when it accepted the offer (the push
# completes byte-exact), or the push fails with a reason and nothing partial.
if [ $rc = 0 ]; then
    m=$(same "$FULL2" "$WORK/c/fullcopy2") || why="$why push succeeded but library not byte-exact ($m);"
    reason="completed (space reserved at acceptance)"
else
    [ -n "$reason" ] || why="$why no error in push result;"
    [ "$(st c failed)" -gt 0 ] 2>/dev/null || why="$why sender status does not show c failed;"
    # A full disk fails assets, one by one; it must not cost the connection.
    jq -r '.peers[]? | select(.peer == "c") | .failures | to_entries[]? | .value' "$WORK/full2.out" 2>/dev/null |
        grep -q "connection closed\|connection lost" && why="$why the receiver dropped the connection instead of failing assets;"
fi
bytes=$(pb "$WORK/full2.out" c)
note="exit $rc; filler took ${filler:-0} B; $stored complete files in library, none partial; push: $reason"
if [ -z "$why" ]; then record disk-full-midway PASS "$bytes" "$note"
else record disk-full-midway FAIL "$bytes" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- hostile peers
# Device c turns hostile: lfsync-hostile-peer, with a key b trusts with
# --auto-accept (a compromised device), speaks the real protocol to b from c's
# namespace, one attack per connection. Meanwhile a pushes a library to b.
# Each attack must get a clear refusal; nothing may appear outside b's library
# (a symlink planted in it points at $OUTSIDE); b must stay up, within bounded
# memory, and complete a's push.
OUTSIDE="$WORK/outside"
mkdir -p "$OUTSIDE"
MALLORY_ID=$(on c "$HOSTILE" id --key "$WORK/c/mallory.key") || { echo "FAIL: lfsync-hostile-peer id"; exit 1; }
lf b trust "$MALLORY_ID" --name mallory --auto-accept >/dev/null 2>&1 || exit 1
fresh_lib b lib-hostile || exit 1   # restarted, so serve reads the new trust
ln -s "$OUTSIDE" "$LIB_b/linked"
LEGIT="$WORK/legit"
sample "$LEGIT" 250000 || exit 1
throttle 80mbit   # keeps a's push running while the attacks arrive
bg_push legit "$LEGIT" --to b
PUSH=$!
on c "$HOSTILE" attack --key "$WORK/c/mallory.key" --connect "$IP_b:$PORT" --peer "$ID_b" \
    --outside "$OUTSIDE" --symlink linked >"$WORK/hostile.out" 2>"$WORK/hostile.err"; hrc=$?
wait_push $PUSH 120; rc=$?
unthrottle
[ -s "$WORK/hostile.out" ] || { record hostile-peer FAIL - "no output (exit $hrc): $(head -c 300 "$WORK/hostile.err")"; dump_logs; }
while IFS="$(printf '\t')" read -r verdict name secs detail; do
    if [ "$verdict" = refused ]; then record "hostile:$name" PASS - "$detail ($secs)"
    else record "hostile:$name" FAIL - "$verdict: $detail ($secs)"; fi
done <"$WORK/hostile.out"
why=""
[ $hrc = 0 ] || why="hostile peer exit $hrc;"
escaped=$(find "$WORK" \( -name 'escaped-dotdot.txt' -o -name 'escaped-nested.txt' -o -name 'absolute.txt' -o -name 'planted.txt' -o -name 'through-symlink.txt' \) -print 2>/dev/null | head -3 | tr '\n' ' ')
[ -z "$escaped" ] || why="$why written outside or into reserved places: $escaped;"
[ -z "$(ls -A "$OUTSIDE")" ] || why="$why $OUTSIDE is not empty;"
alive=no; kill -0 "$SERVE_b" 2>/dev/null && alive=yes
[ $alive = yes ] || why="$why b's serve died;"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_b/status" 2>/dev/null)
[ "${hwm:-0}" -le 262144 ] || why="$why b's serve peaked at ${hwm} KiB;"
[ $rc = 0 ] || why="$why a's push during the attacks exit $rc;"
m=$(same "$LEGIT" "$LIB_b") || why="$why a's library not byte-exact on b ($m);"
bytes=$(pb "$WORK/legit.out" b)
note="$(grep -c . "$WORK/hostile.out") attacks, nothing outside the library, serve alive: $alive, peak RSS $((${hwm:-0} / 1024)) MiB, a's push meanwhile: exit $rc, byte-exact"
if [ -z "$why" ]; then record hostile-survivor PASS "$bytes" "$note"
else record hostile-survivor FAIL "$bytes" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- serve stays up
# b serves at an open-file limit of 128. From c: a flood of bare connections
# past that limit, then 50 silent connections and one trusted connection that
# trickles a byte every 3 s; meanwhile a pushes to b and must succeed.
SERVE_NOFILE=128 fresh_lib b lib-flood || exit 1
FLOODSRC="$WORK/floodsrc"
sample "$FLOODSRC" 60000 || exit 1
on c "$HOSTILE" flood --connect "$IP_b:$PORT" --count 400 --hold 3 >"$WORK/flood.out" 2>"$WORK/flood.err"
T0=$(date +%s)
lf a push "$FLOODSRC" --to b --batch --json >"$WORK/flood-push.out" 2>"$WORK/flood-push.err"; rc=$?
secs=$(( $(date +%s) - T0 ))
why=""
[ $rc = 0 ] || why="push after the flood exit $rc;"
m=$(same "$FLOODSRC" "$LIB_b") || why="$why not byte-exact ($m);"
kill -0 "$SERVE_b" 2>/dev/null || why="$why b's serve died;"
grep -q "accepting a connection failed\|refused a connection\|dropped the oldest handshake" "$WORK/b/serve.log" || why="$why serve logged no failed accept, refusal or dropped handshake;"
fhwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_b/status" 2>/dev/null)
[ "${fhwm:-0}" -le 153600 ] || why="$why b's serve peaked at $((${fhwm:-0} / 1024)) MiB;"
note="$(cut -f2 "$WORK/flood.out" | head -c 120) at ulimit -n 128; then a's push: exit $rc in ${secs}s; serve peak RSS $((${fhwm:-0} / 1024)) MiB"
if [ -z "$why" ]; then record flood-then-push PASS "$(pb "$WORK/flood-push.out" b)" "$note"
else record flood-then-push FAIL "$(pb "$WORK/flood-push.out" b)" "$why $note $(head -c 300 "$WORK/flood.err" "$WORK/flood-push.err")"; dump_logs; fi

SERVE_NOFILE=128 fresh_lib b lib-slow || exit 1
SLOWSRC="$WORK/slowsrc"
sample "$SLOWSRC" 70000 || exit 1
on c "$HOSTILE" hold --connect "$IP_b:$PORT" --silent 50 --key "$WORK/c/mallory.key" --peer "$ID_b" \
    --trickle-every 3 --limit 90 >"$WORK/hold.out" 2>"$WORK/hold.err" &
HOLD=$!
sleep 2
T0=$(date +%s)
lf a push "$SLOWSRC" --to b --batch --json >"$WORK/slow-push.out" 2>"$WORK/slow-push.err"; rc=$?
secs=$(( $(date +%s) - T0 ))
wait $HOLD
silent=$(grep '^silent' "$WORK/hold.out" | cut -f2); trickle=$(grep '^trickle' "$WORK/hold.out" | cut -f2)
longest=$(printf %s "$silent" | sed -n 's/.*longest held \([0-9]*\).*/\1/p')
tclosed=$(printf %s "$trickle" | sed -n 's/closed by the target after \([0-9]*\).*/\1/p')
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_b/status" 2>/dev/null)
why=""
[ $rc = 0 ] || why="push during the hold exit $rc;"
[ "$secs" -le 30 ] || why="$why push took ${secs}s;"
m=$(same "$SLOWSRC" "$LIB_b") || why="$why not byte-exact ($m);"
printf %s "$silent" | grep -q "^50 opened, 50 closed" || why="$why not every silent connection was closed: $silent;"
[ -n "$longest" ] && [ "$longest" -le 15 ] || why="$why a silent connection was held ${longest:-?}s (set-up deadline 10 s);"
# A byte every 3 s is under the minimum rate once the 30 s grace is over: cut at ~33 s,
# well before the 60 s idle timeout that would end a connection sending nothing at all.
trickled=$(printf %s "$trickle" | sed -n 's/.*(\([0-9]*\) bytes trickled).*/\1/p')
[ -n "$tclosed" ] && [ "$tclosed" -le 45 ] && [ "${trickled:-0}" -ge 5 ] || why="$why trickle: $trickle;"
[ "${hwm:-0}" -le 153600 ] || why="$why b's serve peaked at $((${hwm:-0} / 1024)) MiB;"
note="a's push exit $rc in ${secs}s; silent: $silent; trickle: $trickle; serve peak RSS $((${hwm:-0} / 1024)) MiB"
if [ -z "$why" ]; then record slow-connections PASS "$(pb "$WORK/slow-push.out" b)" "$note"
else record slow-connections FAIL "$(pb "$WORK/slow-push.out" b)" "$why $note $(head -c 300 "$WORK/hold.err")"; dump_logs; fi

# "All but the last chunk, then Cancel", 20 times 8 MiB, at b on a 48 MiB file
# system: 140 MiB of abandoned partials would fill it three times over. Staging
# must make room (stale partials no transfer holds go first), so every offer is
# still accepted, and a's push afterwards still fits.
stop_serve b
mkdir -p "$WORK/b/cancelfs"
on b mount -t tmpfs -o size=48m tmpfs "$WORK/b/cancelfs" || exit 1   # only in b's mount namespace
LIB_b="$WORK/b/cancelfs"; start_serve b || exit 1
on c "$HOSTILE" cancel-flood --key "$WORK/c/mallory.key" --connect "$IP_b:$PORT" --peer "$ID_b" --count 20 --chunks 8 \
    >"$WORK/cancel.out" 2>"$WORK/cancel.err"; crc=$?
staged=$(on b du -sb "$LIB_b/.lfsync/staging" 2>/dev/null | cut -f1)
CANCELSRC="$WORK/cancelsrc"
sample "$CANCELSRC" 40000 || exit 1
lf a push "$CANCELSRC" --to b --batch --json >"$WORK/cancel-push.out" 2>"$WORK/cancel-push.err"; rc=$?
result=$(cut -f2 "$WORK/cancel.out")
why=""
[ $crc = 0 ] || why="cancel-flood exit $crc: $(head -c 200 "$WORK/cancel.err");"
printf %s "$result" | grep -q "20 accepted, 0 refused" || why="$why offers refused once staging filled: $result;"
[ "${staged:-0}" -le $((48 * 1048576)) ] || why="$why staging holds ${staged} B;"
[ $rc = 0 ] || why="$why a's push afterwards exit $rc ($(head -c 200 "$WORK/cancel-push.err"));"
# The tmpfs exists only in b's mount namespace: compare a copy taken from inside it.
mkdir -p "$WORK/b/cancelcopy"
on b tar -C "$LIB_b" --exclude=./.lfsync -cf - . | tar -C "$WORK/b/cancelcopy" -xf -
m=$(same "$CANCELSRC" "$WORK/b/cancelcopy") || why="$why not byte-exact ($m);"
note="$result; staging then held $((${staged:-0} / 1048576)) MiB of the 48 MiB file system; a's push afterwards: exit $rc"
if [ -z "$why" ]; then record cancel-flood PASS "$(pb "$WORK/cancel-push.out" b)" "$note"
else record cancel-flood FAIL "$(pb "$WORK/cancel-push.out" b)" "$why $note"; dump_logs; fi

# A receiver that accepts the push and then swallows everything, answering
# nothing (no receipts, no Pongs): the push must give up within the documented
# deadline (PROTOCOL.md: nothing received for 2 x 60 s) and exit non-zero.
STALL_ID=$(on c "$HOSTILE" id --key "$WORK/c/stalled.key") || exit 1
lf a trust "$STALL_ID" --name stalled --address "$IP_c:7979" >/dev/null 2>&1 || exit 1
on c "$HOSTILE" stalled-receiver --key "$WORK/c/stalled.key" --listen "0.0.0.0:7979" >"$WORK/stallrx.out" 2>"$WORK/stallrx.err" &
STALL=$!
for _ in $(seq 1 50); do grep -q listening "$WORK/stallrx.out" 2>/dev/null && break; sleep 0.1; done
T0=$(date +%s)
bg_push stall "$FLOODSRC" --to stalled
PUSH=$!
wait_push $PUSH 200; rc=$?
secs=$(( $(date +%s) - T0 ))
kill "$STALL" 2>/dev/null; wait "$STALL" 2>/dev/null
why=""
[ $rc = 1 ] || [ $rc = 69 ] || why="push exit $rc (want 1 or 69; 124 = still waiting after 200 s);"
[ $secs -le 150 ] || why="$why gave up after ${secs}s (deadline 120 s + set-up);"
reason=$(jq -r '[.peers[]? | select(.peer == "stalled") | .state] | first // empty' "$WORK/stall.out" 2>/dev/null | head -c 160)
note="exit $rc after ${secs}s: ${reason:-$(tail -n 1 "$WORK/stall.err" | head -c 160)}; $(grep stalled-receiver "$WORK/stallrx.out" | cut -f2)"
if [ -z "$why" ]; then record stalled-receiver PASS "$(pb "$WORK/stall.out" stalled)" "$note"
else record stalled-receiver FAIL "$(pb "$WORK/stall.out" stalled)" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- watch: b leaves and comes back
# a watches a folder for b (found over DNS-SD). b's link goes down while new photos
# arrive on a; once it is back, b must get everything it missed, with nobody touching a.
fresh_lib b lib-watch || exit 1
WSRC="$WORK/watchsrc"
mkdir -p "$WSRC"
head -c 200000 /dev/urandom >"$WSRC/IMG_0001.JPG"
nsenter -t "$HOLDER_a" -n -m -u -- env LFSYNC_HOME="$WORK/a/home" AVAHI_COMPAT_NOWARN=1 \
    "$LFSYNC" watch "$WSRC" --to b --json --settle 1 >"$WORK/watch.out" 2>"$WORK/watch.err" &
WATCH=$!
why=""
wait_file() {  # wait_file PATH SECONDS
    for _ in $(seq 1 $(($2 * 10))); do [ -f "$1" ] && return 0; sleep 0.1; done
    return 1
}
wait_file "$LIB_b/IMG_0001.JPG" 60 || why="the first photo never reached b;"
ip -n "$P-b" link set lab0 down
T0=$(date +%s)
mkdir -p "$WSRC/2026-12-04"
for i in 2 3 4 5 6; do head -c 300000 /dev/urandom >"$WSRC/2026-12-04/IMG_000$i.JPG"; done
# a notices: its push to b fails or it cannot reach b (the engine's stall deadline).
for _ in $(seq 1 900); do grep -q '"event":"unreachable"' "$WORK/watch.out" 2>/dev/null && break; sleep 0.1; done
grep -q '"event":"unreachable"' "$WORK/watch.out" || why="$why watch never reported b unreachable;"
tnotice=$(( $(date +%s) - T0 ))
ip -n "$P-b" link set lab0 up
T1=$(date +%s)
got=0
for _ in $(seq 1 1200); do
    m=$(same "$WSRC" "$LIB_b" 2>/dev/null) && { got=1; break; }
    sleep 0.1
done
tback=$(( $(date +%s) - T1 ))
[ $got = 1 ] || why="$why b not byte-exact 120 s after its link came back ($(same "$WSRC" "$LIB_b"));"
kill -TERM "$WATCH" 2>/dev/null; wait "$WATCH"; rcw=$?
[ $rcw = 0 ] || why="$why watch exit $rcw after SIGTERM;"
pushes=$(grep -c '"event":"push"' "$WORK/watch.out")
note="b unreachable noticed after ${tnotice}s, caught up ${tback}s after its link came back; $pushes pushes; watch exit $rcw"
if [ -z "$why" ]; then record watch-leave-return PASS "$(lib_bytes "$WSRC")" "$note"
else record watch-leave-return FAIL "$(lib_bytes "$WSRC")" "$why $note"; cat "$WORK/watch.err" | tail -20; dump_logs; fi

# ---------------------------------------------------------------- holdings: offload, pull back, repair
# a's library goes to b and c; b and c let a pull. Each row is one way an offload could
# count a copy that is not there (ARCHITECTURE.md, "What the ledger knows").
lf b trust "$ID_a" --name a --auto-accept --allow-pull >/dev/null 2>&1 || exit 1
lf c trust "$ID_a" --name a --auto-accept --allow-pull >/dev/null 2>&1 || exit 1
fresh_lib b lib-hold || exit 1
fresh_lib c lib-hold || exit 1
HOLD="$WORK/holdsrc"
sample "$HOLD" 40000 || exit 1
# Files left alone for a while: scans trust their cached hashes, as on a real library.
find "$HOLD" -type f -exec touch -d '2 hours ago' {} +
cp -a "$HOLD" "$WORK/hold-original"
for d in b c; do lf a push "$HOLD" --to "$d" --batch >/dev/null 2>"$WORK/hold-push.err" || { echo "push to $d failed: $(cat "$WORK/hold-push.err")"; exit 1; }; done
# rot FILE: one bit flipped, size and modification time (to the nanosecond) kept: an
# in-place edit (its change time moves), which is what a holder's damaged copy looks like
# to a proof.
ROT_PY='import os, sys
p = sys.argv[1]; st = os.stat(p); b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1
open(p, "r+b").write(b); os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))'
rot() { python3 -c "$ROT_PY" "$1"; }
files_in() { find "$1" -path "$1/.lfsync" -prune -o -type f -print | wc -l; }
TOTAL=$(files_in "$HOLD")

# A copy damaged on c's disk: that asset is not offloaded; the rest goes.
VICTIM="DCIM/100APPLE/IMG_0002.HEIC"
rot "$LIB_c/$VICTIM"
lf a offload "$HOLD" --copies 2 --peers b,c --json >"$WORK/off-dry.out" 2>"$WORK/off-dry.err"; rcd=$?
why=""
[ "$(files_in "$HOLD")" = "$TOTAL" ] || why="the dry run (exit $rcd) deleted files;"
lf a offload "$HOLD" --copies 2 --peers b,c --yes --json >"$WORK/off.out" 2>"$WORK/off.err"; rc=$?
[ $rc = 0 ] || why="$why offload exit $rc;"
[ -f "$HOLD/$VICTIM" ] || why="$why the asset c holds damaged was deleted;"
jq -e --arg v "$VICTIM" '.[0].kept[] | select(.path == $v) | .reason | contains("c: held but changed")' "$WORK/off.out" >/dev/null 2>&1 || why="$why no 'held but changed' from c;"
left=$(files_in "$HOLD")
[ "$left" -lt "$TOTAL" ] || why="$why nothing was offloaded;"
held=$(lf a whereis "$HOLD" --json | jq '[.[] | select(.here == "offloaded" and (.holders | sort) == ["b", "c"])] | length')
note="exit $rc: $(jq -r '.[0] | "\(.removed | length) assets removed, \(.kept | length) kept"' "$WORK/off.out" 2>/dev/null), $left of $TOTAL files left; $held recorded as held by b and c"
if [ -z "$why" ]; then record offload-damaged-copy PASS "$(jq -r '.[0].bytesFreed' "$WORK/off.out")" "$note"
else record offload-damaged-copy FAIL - "$why $note $(head -c 300 "$WORK/off.err")"; dump_logs; fi

# pull brings back every offloaded file, byte for byte.
lf a pull --from b "$HOLD" >/dev/null 2>"$WORK/pullback.err"; rc=$?
why=""
[ $rc = 0 ] || why="pull exit $rc;"
diffs=$(same "$WORK/hold-original" "$HOLD") || why="$why $diffs;"
if [ -z "$why" ]; then record offload-pull-back PASS "$(lib_bytes "$HOLD")" "exit $rc, byte-exact: $(tail -n 2 "$WORK/pullback.err" | tr '\n' ' ' | head -c 160)"
else record offload-pull-back FAIL - "$why $(head -c 300 "$WORK/pullback.err")"; dump_logs; fi

# Bit rot on a, made under its file system: verify --repair fetches the bad chunk from a
# device that holds it verified. An in-place edit beside it (time put back) is no rot: kept.
# The library lives on an ext4 of its own, loop-mounted in a's mount namespace, so that one
# bit can be flipped in the disk image while it is unmounted: the file's inode, size and
# times (its change time too) stay as they were, as on a disk that rots.
ROTIMG="$WORK/rotdisk.img"; ROTDISK="$WORK/rotdisk"; ROT="$ROTDISK/lib"
mkdir -p "$ROTDISK"
truncate -s 64M "$ROTIMG" && mkfs.ext4 -q -F -b 4096 "$ROTIMG" && on a mount -o loop "$ROTIMG" "$ROTDISK" \
    || { echo "cannot loop-mount an ext4 in a's namespace ('make test-deps' installs e2fsprogs)"; exit 1; }
on a "$BENCH" sample-library "$ROT" --padding 40000 >/dev/null 2>&1 || { echo "no sample library on the disk"; exit 1; }
on a rm -f "$ROT/Documents/outside-link"
on a find "$ROT" -type f -exec touch -d '2 hours ago' {} +
for d in b c; do lf a push "$ROT" --to "$d" --batch >/dev/null 2>"$WORK/rot-push.err" || { echo "push to $d failed: $(cat "$WORK/rot-push.err")"; exit 1; }; done
on a cp "$ROT/Videos/birthday.mp4" "$WORK/birthday.healthy"
on a cp "$ROT/Documents/notes.txt" "$WORK/notes.before"
sleep 3.5   # left alone long enough for their change times to vouch for them
lf a scan "$ROT" >/dev/null 2>&1   # the hashes verify compares with: recorded now, before the rot
size=$(on a stat -c %s "$ROT/Videos/birthday.mp4"); off=$((size / 2))
on a umount "$ROTDISK" || exit 1
blk=$(debugfs -R "bmap /lib/Videos/birthday.mp4 $((off / 4096))" "$ROTIMG" 2>/dev/null)
python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 16])); f.close()' \
    "$ROTIMG" $((blk * 4096 + off % 4096)) || exit 1
on a mount -o loop "$ROTIMG" "$ROTDISK" || exit 1
on a python3 -c "$ROT_PY" "$ROT/Documents/notes.txt"
on a cp "$ROT/Documents/notes.txt" "$WORK/notes.edited"
lf a verify "$ROT" --repair --json >"$WORK/repair.out" 2>"$WORK/repair.err"; rc=$?
why=""
[ $rc = 0 ] || why="verify --repair exit $rc;"
on a cmp -s "$ROT/Videos/birthday.mp4" "$WORK/birthday.healthy" || why="$why not byte-exact after the repair;"
jq -e '.modified == ["Documents/notes.txt"] and .corrupt == ["Videos/birthday.mp4"]' "$WORK/repair.out" >/dev/null 2>&1 \
    || why="$why the edit and the rot were not told apart: $(jq -c '{corrupt, modified}' "$WORK/repair.out" 2>/dev/null);"
on a cmp -s "$ROT/Documents/notes.txt" "$WORK/notes.edited" || why="$why the edit was reverted;"
cmp -s "$WORK/notes.before" "$WORK/notes.edited" && why="$why the edit did not happen;"
kept=$(jq -r '.repaired[0].damagedCopy // empty' "$WORK/repair.out" 2>/dev/null)
[ -n "$kept" ] && on a test -f "$ROT/$kept" || why="$why the damaged copy was not kept;"
note="exit $rc: $(jq -r '.repaired[0] | "\(.chunks) chunk, \(.bytes) B from \(.from)"' "$WORK/repair.out" 2>/dev/null); the edit beside it kept"
if [ -z "$why" ]; then record repair-bit-rot PASS "$(jq -r '.repaired[0].bytes' "$WORK/repair.out")" "$note"
else record repair-bit-rot FAIL - "$why $note $(head -c 300 "$WORK/repair.err")"; dump_logs; fi
on a umount "$ROTDISK"; ROTDISK=""

# One device under two names counts once: b by name and by Device ID is one copy.
lf a offload "$HOLD" --copies 2 --yes --peers "b,$ID_b" --json >"$WORK/twice.out" 2>"$WORK/twice.err"; rc=$?
why=""
[ $rc = 69 ] || why="exit $rc, not 69;"
[ "$(files_in "$HOLD")" = "$TOTAL" ] || why="$why files were deleted;"
if [ -z "$why" ]; then record offload-same-device PASS 0 "exit $rc; devices counted: $(jq -c '.[0].devicesChecked' "$WORK/twice.out")"
else record offload-same-device FAIL - "$why $(head -c 300 "$WORK/twice.err")"; fi

# c's link goes down while it is being checked: its answers do not count, nothing goes.
lf a offload "$HOLD" --copies 2 --peers b,c --yes --timeout 5 --json >"$WORK/down.out" 2>"$WORK/down.err" &
OFF=$!
sleep 0.3
ip -n "$P-c" link set lab0 down
wait $OFF; rc=$?
ip -n "$P-c" link set lab0 up
why=""
[ $rc = 69 ] || why="exit $rc, not 69;"
[ "$(files_in "$HOLD")" = "$TOTAL" ] || why="$why files were deleted;"
if [ -z "$why" ]; then record offload-link-down PASS 0 "exit $rc; $(grep -v '^asking' "$WORK/down.err" | head -n 1 | head -c 160)"
else record offload-link-down FAIL - "$why $(head -c 300 "$WORK/down.err")"; fi

# A device that claims every content with made-up proofs (c's address, another key).
stop_serve c
on c "$HOSTILE" false-holder --key "$WORK/liar.key" --listen "0.0.0.0:$PORT" --mode claim >"$WORK/liar.out" 2>&1 &
LIAR=$!
for _ in $(seq 1 50); do grep -q listening "$WORK/liar.out" 2>/dev/null && break; sleep 0.1; done
lf a trust "$("$HOSTILE" id --key "$WORK/liar.key")" --name liar --address "$IP_c:$PORT" >/dev/null 2>&1
lf a offload "$HOLD" --copies 2 --yes --peers b,liar --json >"$WORK/liar-off.out" 2>"$WORK/liar-off.err"; rc=$?
pkill -f "false-holder --key $WORK/liar.key" 2>/dev/null; wait "$LIAR" 2>/dev/null
why=""
[ "$(files_in "$HOLD")" = "$TOTAL" ] || why="files were deleted on a liar's word;"
jq -e '.[0].kept | length > 0 and all(.reason | contains("liar: claimed, but its proof does not match"))' "$WORK/liar-off.out" >/dev/null 2>&1 || why="$why the liar's proofs were not refused;"
if [ -z "$why" ]; then record offload-false-holder PASS 0 "exit $rc; $(jq -r '.[0].kept[0].reason' "$WORK/liar-off.out" | head -c 120)"
else record offload-false-holder FAIL - "$why $(head -c 300 "$WORK/liar-off.err")"; fi
lf a untrust liar >/dev/null 2>&1
start_serve c || exit 1

# kill -9 once files start going: each is still here, or recorded with its two holders.
lf a offload "$HOLD" --copies 2 --peers b,c --yes >/dev/null 2>&1 &
OFF=$!
for _ in $(seq 1 3000); do [ "$(files_in "$HOLD")" -lt "$TOTAL" ] && break; kill -0 $OFF 2>/dev/null || break; done
pkill -9 -f "offload $HOLD" 2>/dev/null; wait $OFF 2>/dev/null
present=$(files_in "$HOLD")
lf a whereis "$HOLD" --json >"$WORK/kill-where.json" 2>/dev/null
recorded=$(jq '[.[] | select(.here == "offloaded" and (.holders | sort) == ["b", "c"]) | .files | length] | add // 0' "$WORK/kill-where.json")
why=""
[ $((present + recorded)) -ge "$TOTAL" ] || why="$present present + $recorded recorded < $TOTAL files;"
lf a pull --from b "$HOLD" >/dev/null 2>&1
diffs=$(same "$WORK/hold-original" "$HOLD") || why="$why not all back after a pull: $diffs;"
note="killed with $present of $TOTAL files present, $recorded recorded as offloaded; all back after a pull"
if [ -z "$why" ]; then record offload-kill-9 PASS 0 "$note"
else record offload-kill-9 FAIL - "$why $note"; fi

# ---------------------------------------------------------------- wrong key
# Device b's ID trusted under c's address: c's key does not match, so a must refuse.
stop_serve b   # b stops advertising, so discovery cannot supply b's real address
fresh_lib c lib-key || exit 1
sleep 2
lf a trust "$ID_b" --name impostor --address "$IP_c:$PORT" >/dev/null 2>&1
KEY="$WORK/keysrc"
sample "$KEY" 50000 || exit 1
lf a push "$KEY" --to impostor --batch --json >"$WORK/key.out" 2>"$WORK/key.err"; rc=$?
why=""
[ $rc != 0 ] || why="push to an impostor succeeded;"
n=$(find "$LIB_c" -path "$LIB_c/.lfsync" -prune -o -type f -print | wc -l)
[ "$n" = 0 ] || why="$why $n files arrived at c;"
bytes=$(pb "$WORK/key.out" impostor)
[ "$bytes" = 0 ] || why="$why $bytes chunk bytes sent;"
note="exit $rc: $(tr '\n' ' ' <"$WORK/key.err" | head -c 200)"
if [ -z "$why" ]; then record wrong-key PASS "$bytes" "$note"
else record wrong-key FAIL "$bytes" "$why $note"; dump_logs; fi

# ---------------------------------------------------------------- sync: a household converges
# a, b and c each run one `lfsync sync --all --delete` on a library of their own. b's link
# goes down while a edits a sidecar, renames a video and deletes a note; c follows a at once,
# b once its link is back (through a or c, whichever gets there first); then what c changes
# reaches both. No conflict copy: every change was made by one device at a time.
stop_serve a; stop_serve c
lf a untrust impostor >/dev/null 2>&1
SYNCPORT=7880
for d in $DEVICES; do
    for o in $DEVICES; do
        [ "$o" = "$d" ] && continue
        eval "id=\$ID_$o ip=\$IP_$o"
        lf "$d" trust "$id" --name "$o" --address "$ip:$SYNCPORT" --auto-accept >/dev/null 2>&1 || exit 1
    done
    mkdir -p "$WORK/$d/lib-sync"
done
SA="$WORK/a/lib-sync" SB="$WORK/b/lib-sync" SC="$WORK/c/lib-sync"
sample "$SA" 40000 || exit 1
find "$SA" -type f -exec touch -d '2 hours ago' {} +
start_sync() {
    eval "h=\$HOLDER_$1"
    nsenter -t "$h" -n -m -u -- env LFSYNC_HOME="$WORK/$1/home" AVAHI_COMPAT_NOWARN=1 \
        "$LFSYNC" sync "$WORK/$1/lib-sync" --all --delete --listen "0.0.0.0:$SYNCPORT" --no-advertise --settle 0.5 \
        >>"$WORK/$1/sync.log" 2>&1 &
    eval "SYNC_$1=$!"
}
wait_same() {  # wait_same DIR1 DIR2 SECONDS
    end=$(( $(date +%s) + $3 ))
    while [ "$(date +%s)" -lt "$end" ]; do same "$1" "$2" >/dev/null 2>&1 && return 0; sleep 0.5; done
    return 1
}
for d in $DEVICES; do start_sync "$d"; done
why=""
T0=$(date +%s)
wait_same "$SA" "$SB" 120 && wait_same "$SA" "$SC" 120 || why="the first sync did not converge ($(same "$SA" "$SB"; same "$SA" "$SC"));"
tfirst=$(( $(date +%s) - T0 ))
ip -n "$P-b" link set lab0 down
printf '<x:xmpmeta><rating>4</rating></x:xmpmeta>\n' >"$SA/Camera/DSC_0100.NEF.xmp"
mv "$SA/Videos/birthday.mp4" "$SA/Videos/birthday 2024.mp4"
rm "$SA/Documents/notes.txt"
T0=$(date +%s)
wait_same "$SA" "$SC" 120 || why="$why c did not follow a while b was away ($(same "$SA" "$SC"));"
tc_follow=$(( $(date +%s) - T0 ))
ip -n "$P-b" link set lab0 up
T0=$(date +%s)
wait_same "$SA" "$SB" 300 || why="$why b did not catch up after its link came back ($(same "$SA" "$SB"));"
tb_back=$(( $(date +%s) - T0 ))
printf 'Call the printer.\n' >"$SC/Documents/todo.txt"
T0=$(date +%s)
wait_same "$SC" "$SA" 120 && wait_same "$SC" "$SB" 120 || why="$why what c changed did not reach a and b;"
tc_out=$(( $(date +%s) - T0 ))
copies=$(find "$SA" "$SB" "$SC" -path '*/.lfsync' -prune -o -name '*(conflict *' -print | wc -l)
[ "$copies" = 0 ] || why="$why $copies conflict copies;"
kept=$(find "$SB/.lfsync/versions" -type f 2>/dev/null | wc -l)
[ "$kept" -ge 2 ] || why="$why b kept $kept replaced or deleted files (want the sidecar's old version, the note and the video's old name);"
for d in $DEVICES; do eval "pid=\$SYNC_$d"; kill -TERM "$pid" 2>/dev/null; done
rcs=""
for d in $DEVICES; do eval "pid=\$SYNC_$d"; wait "$pid"; rc=$?; rcs="$rcs$d:$rc "; [ $rc = 0 ] || why="$why sync on $d exit $rc;"; done
note="converged in ${tfirst}s; c followed a's edit, rename and deletion in ${tc_follow}s; b caught up ${tb_back}s after its link came back; c's change reached a and b in ${tc_out}s; b kept $kept versions; exits $rcs"
if [ -z "$why" ]; then record sync-household PASS "$(lib_bytes "$SA")" "$note"
else record sync-household FAIL "$(lib_bytes "$SA")" "$why $note"; for d in $DEVICES; do echo "--- $d/sync.log"; tail -n 25 "$WORK/$d/sync.log"; done; fi


echo
printf '%-22s %-4s %14s  %s\n' scenario result bytes note
printf '%s' "$RESULTS"
echo "runtime $(( $(date +%s) - START_ALL ))s"
exit $FAILED
