#!/bin/sh
# The discovery lab: two "devices", each a network namespace with its own
# hostname, system D-Bus and avahi-daemon, joined by a veth pair. One device
# advertises with lfsync-discovery-probe, the other browses; the lab checks
# that the browser finds the service (device ID, version and port from TXT,
# the advertiser's address from A records) and sees it lost after withdrawal.
#
#   usage: discovery-lab.sh PROBE-BINARY
#   exit:  0 passed, 1 failed, 77 skipped (reason on stdout)
#
# Root only. Nothing runs on the machine's real interfaces: avahi and every
# packet stay inside the lab's namespaces, which are removed on exit (also on
# failure or interruption). Names include the PID, so runs never collide.
set -u

PROBE=${1:-}
FOUND_TIMEOUT=${LAB_FOUND_TIMEOUT:-20}
LOST_TIMEOUT=${LAB_LOST_TIMEOUT:-20}

skip() { echo "SKIP: $*"; exit 77; }
[ -n "$PROBE" ] && [ -x "$PROBE" ] || skip "probe binary not found (${PROBE:-none given}); build lfsync-discovery-probe"
[ "$(id -u)" = 0 ] || skip "the discovery lab needs root (network namespaces)"
for tool in ip unshare mount hostname dbus-daemon avahi-daemon; do
    command -v "$tool" >/dev/null 2>&1 ||
        skip "$tool is missing; 'make test' installs avahi-daemon, dbus and iproute2"
done

TAG="lfd$$"
NS_A="${TAG}-a"
NS_B="${TAG}-b"
WORK=$(mktemp -d "/tmp/lfsync-discovery-lab.XXXXXX")
NAME="lab-$$"
PORT=47123
DEVICE_ID="LABDEV7-$$"

. "$(dirname "$0")/netns.sh"

cleanup() {
    status=$?
    trap - EXIT INT TERM
    stop_namespace "$NS_A"
    stop_namespace "$NS_B"
    rm -rf "$WORK"
    exit $status
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$NS_A" 2>"$WORK/err" || skip "ip netns does not work here: $(cat "$WORK/err")"
ip netns add "$NS_B" || exit 1
# Created inside the lab namespaces: the link never exists on the host.
ip -n "$NS_A" link add "${TAG}a" type veth peer name "${TAG}b" netns "$NS_B" || exit 1
ip -n "$NS_A" address add 10.231.0.1/24 dev "${TAG}a" || exit 1
ip -n "$NS_B" address add 10.231.0.2/24 dev "${TAG}b" || exit 1
for ns_if in "$NS_A ${TAG}a" "$NS_B ${TAG}b"; do
    set -- $ns_if
    ip -n "$1" link set lo up && ip -n "$1" link set "$2" up || exit 1
done

# device NAMESPACE HOSTNAME COMMAND...: a device (see netns.sh), then COMMAND in
# the same mount namespace so it reaches that device's D-Bus and avahi-daemon.
device() {
    ns=$1 host=$2
    shift 2
    # exec: a background function runs in a subshell, and $! must be the probe itself.
    exec ip netns exec "$ns" unshare -m -u sh -c "$LAB_DEVICE_INIT"' exec "$@"' "$host" "$@"
}

# wait_for FILE PATTERN SECONDS
wait_for() {
    deadline=$(( $(date +%s) + $3 ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.2
    done
    return 1
}

report_failure() {
    echo "FAIL: $*"
    for log in "$WORK"/*.log; do echo "--- $(basename "$log")"; cat "$log"; done
    exit 1
}

device "$NS_B" dev-b "$PROBE" browse $((FOUND_TIMEOUT + LOST_TIMEOUT + 30)) >"$WORK/browser.log" 2>&1 &
device "$NS_A" dev-a "$PROBE" advertise "$NAME" "$PORT" "$DEVICE_ID" >"$WORK/advertiser.log" 2>&1 &
ADVERTISER=$!   # the subshell, ip netns exec, unshare and sh all exec: this is the probe's PID
START=$(date +%s)

wait_for "$WORK/advertiser.log" "^registered $NAME\$" "$FOUND_TIMEOUT" ||
    report_failure "the advertiser did not register within ${FOUND_TIMEOUT}s"
wait_for "$WORK/browser.log" "^found name=$NAME id=$DEVICE_ID version=1 host=dev-a.local port=$PORT " "$FOUND_TIMEOUT" ||
    report_failure "the browser did not find $NAME within ${FOUND_TIMEOUT}s"
echo "found after $(( $(date +%s) - START ))s: $(grep "^found name=$NAME " "$WORK/browser.log")"
grep "^found name=$NAME " "$WORK/browser.log" | grep -q "addresses=10.231.0.1" ||
    report_failure "the advertiser's address 10.231.0.1 was not resolved"

kill -TERM "$ADVERTISER"
wait_for "$WORK/advertiser.log" "^withdrawn $NAME\$" 10 ||
    report_failure "the advertiser did not withdraw on SIGTERM"
START=$(date +%s)
wait_for "$WORK/browser.log" "^lost name=$NAME\$" "$LOST_TIMEOUT" ||
    report_failure "the browser did not see $NAME lost within ${LOST_TIMEOUT}s"
echo "lost after $(( $(date +%s) - START ))s"
echo "PASS"
