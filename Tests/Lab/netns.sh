# Shared by the labs (sourced; POSIX sh): starting a "device" inside a network
# namespace and removing a namespace with everything in it.

# The start of a device's shell, run as `unshare -m -u sh -c "$LAB_DEVICE_INIT..." HOSTNAME`:
# its own host name (distinct names, or avahi's host-name probing stalls every
# registration), a private tmpfs /run with its own system D-Bus and avahi-daemon,
# waiting until avahi answers. Append the commands the device runs next.
LAB_DEVICE_INIT='
    hostname "$0" &&
    mount --make-rprivate / &&
    mount -t tmpfs tmpfs /run &&
    mkdir -p /run/dbus /run/avahi-daemon &&
    dbus-daemon --system --fork &&
    avahi-daemon --no-drop-root --no-chroot -D || exit 70
    for _ in $(seq 1 50); do avahi-daemon -c 2>/dev/null && break; sleep 0.1; done
    avahi-daemon -c 2>/dev/null || { echo "avahi-daemon did not start" >&2; exit 70; }
'

# stop_namespace NS: every process inside a lab namespace was started by the lab;
# TERM them, KILL what is left after two seconds, then delete the namespace.
stop_namespace() {
    ns=$1
    pids=$(ip netns pids "$ns" 2>/dev/null)
    if [ -n "$pids" ]; then
        kill $pids 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
            sleep 0.2
        done
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -9 $pids 2>/dev/null
        sleep 0.2
    fi
    ip netns delete "$ns" 2>/dev/null
}
