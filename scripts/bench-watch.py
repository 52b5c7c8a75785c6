#!/usr/bin/env python3
"""Everyday-use figures for BENCHMARKS.md, with real processes on loopback:

  1. latency: a photo's last write to its Receipt (the `push` event of
     `watch --json`, written after the receiver's Receipt), median of 20;
  2. idle: CPU (% of one core) and RSS of a `watch` over a large library once it
     has caught up, under `ulimit -n 1024`;
  3. --bwlimit accuracy: a push of incompressible bytes at a limit, for about
     30 s, against the limit.

The idle scenario runs WATCH_IDLE_RUNS times (a fresh library and fresh state each
time) and reports each run and the median. The idle resident size is read at the
end of the idle window; the size just after a one-photo pass (a cached rescan of
the whole tree) and the catch-up's peak (VmHWM) are reported beside it.

    scripts/bench-watch.py [BUILD_DIR]      (make bench-watch)

Knobs (environment): WATCH_FILES (200000), WATCH_DIRS (2000), WATCH_IDLE_S (60),
WATCH_LATENCY_RUNS (20), WATCH_IDLE_RUNS (3), BWLIMIT (4M), BWLIMIT_SECONDS (30), BENCH_DIR (bench-out/watch).
"""
import json, os, shutil, signal, statistics, subprocess, sys, time

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release")
lfsync = os.path.join(build, "lfsync")
work = os.path.abspath(os.environ.get("BENCH_DIR", "bench-out/watch"))
files = int(os.environ.get("WATCH_FILES", "200000"))
dirs = int(os.environ.get("WATCH_DIRS", "2000"))
idle_s = float(os.environ.get("WATCH_IDLE_S", "60"))
runs = int(os.environ.get("WATCH_LATENCY_RUNS", "20"))
idle_runs = int(os.environ.get("WATCH_IDLE_RUNS", "3"))
bwlimit = os.environ.get("BWLIMIT", "4M")
bw_seconds = float(os.environ.get("BWLIMIT_SECONDS", "30"))
children = []


def log(text):
    print(time.strftime("%H:%M:%S"), text, file=sys.stderr, flush=True)


def run(home, *args, check=True):
    env = dict(os.environ, LFSYNC_HOME=home, NO_COLOR="1")
    result = subprocess.run([lfsync, *args], env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"lfsync {' '.join(args)}: exit {result.returncode}: {result.stderr}")
    return result


def start(home, args, out, err, nofile=None):
    env = dict(os.environ, LFSYNC_HOME=home, NO_COLOR="1")
    command = [lfsync, *args]
    if nofile:
        command = ["/bin/sh", "-c", f'ulimit -n {nofile} && exec "$0" "$@"', *command]
    process = subprocess.Popen(command, env=env, stdout=open(out, "w"), stderr=open(err, "w"))
    children.append(process)
    return process


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def events(path):
    try:
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.strip().startswith("{")]
    except FileNotFoundError:
        return []


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def status_kib(pid, field):
    """A size from /proc/PID/status: VmRSS (resident now) or VmHWM (the peak so far)."""
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def pair(name):
    """A laptop and a nas (serving `name`'s library on a free port), trusting each other."""
    root = os.path.join(work, name)
    shutil.rmtree(root, ignore_errors=True)
    laptop, nas = os.path.join(root, "laptop"), os.path.join(root, "nas")
    for home in (laptop, nas):
        run(home, "init", "--name", os.path.basename(home))
    ids = {home: json.loads(run(home, "id", "--json").stdout)["deviceID"] for home in (laptop, nas)}
    run(nas, "trust", ids[laptop], "--name", "laptop", "--auto-accept")
    library, received = os.path.join(root, "library"), os.path.join(root, "received")
    os.makedirs(library)
    serve = start(nas, ["serve", received, "--listen", "127.0.0.1:0", "--no-advertise"],
                  os.path.join(root, "serve.out"), os.path.join(root, "serve.log"))
    address = None

    def listening():
        nonlocal address
        text = open(os.path.join(root, "serve.log")).read()
        if "listening on " in text:
            address = text.split("listening on ", 1)[1].split()[0]
            return True
        return False
    wait_for(listening, 60, "serve to listen")
    run(laptop, "trust", ids[nas], "--name", "nas", "--address", address)
    return root, laptop, library, received, serve


def sync_disks():
    subprocess.run(["sync"])


def latency():
    root, laptop, library, received, serve = pair("latency")
    out = os.path.join(root, "watch.jsonl")
    start(laptop, ["watch", library, "--to", "nas", "--json"], out, os.path.join(root, "watch.log"))
    wait_for(lambda: any(e["event"] == "watching" for e in events(out)), 60, "watch to start")
    photo = os.urandom(3 << 20)
    samples = []
    for index in range(runs):
        sync_disks()
        before = len([e for e in events(out) if e["event"] == "push"])
        path = os.path.join(library, f"IMG_{index:04d}.HEIC")
        with open(path, "wb") as handle:
            handle.write(photo[:len(photo) - index] + index.to_bytes(4, "big"))
        written = time.monotonic()
        wait_for(lambda: len([e for e in events(out) if e["event"] == "push"]) > before, 60, f"push of photo {index}")
        samples.append(time.monotonic() - written)
        time.sleep(0.5)
    for name in os.listdir(library):
        with open(os.path.join(library, name), "rb") as a, open(os.path.join(received, name), "rb") as b:
            assert a.read() == b.read(), f"{name} differs"
    return samples


def make_library(library, count, folders):
    per = max(1, count // folders)
    made = 0
    for folder in range(folders):
        path = os.path.join(library, f"{2000 + folder // 100}", f"{folder:04d}")
        os.makedirs(path, exist_ok=True)
        for item in range(per):
            if made == count:
                return
            with open(os.path.join(path, f"IMG_{item:04d}.JPG"), "wb") as handle:
                handle.write(b"%d/%d " % (folder, item) + bytes(200))
            made += 1


def idle():
    root, laptop, library, received, serve = pair("idle")
    log(f"writing {files} files in {dirs} folders")
    make_library(library, files, dirs)
    out = os.path.join(root, "watch.jsonl")
    sync_disks()
    started = time.monotonic()
    watch = start(laptop, ["watch", library, "--to", "nas", "--json"], out, os.path.join(root, "watch.log"), nofile=1024)
    wait_for(lambda: sum(e.get("stored", 0) for e in events(out) if e["event"] == "push") >= files, 3600, "the first pass")
    caught_up = time.monotonic() - started
    log(f"caught up in {caught_up:.1f} s; idle for {idle_s:.0f} s")
    time.sleep(5)
    ticks, wall = cpu_ticks(watch.pid), time.monotonic()
    time.sleep(idle_s)
    ticks, wall = cpu_ticks(watch.pid) - ticks, time.monotonic() - wall
    idle_rss = status_kib(watch.pid, "VmRSS") / 1024.0
    peak = status_kib(watch.pid, "VmHWM") / 1024.0
    hz = os.sysconf("SC_CLK_TCK")
    # And one photo more: still watched after the big pass. The pass it starts is a
    # cached rescan of the whole tree; its resident size is read once it has reported.
    pushes = sum(1 for e in events(out) if e["event"] == "push")
    with open(os.path.join(library, "2000", "0000", "NEW.JPG"), "wb") as handle:
        handle.write(os.urandom(100_000))
    wait_for(lambda: os.path.exists(os.path.join(received, "2000", "0000", "NEW.JPG")), 300, "the new photo")
    wait_for(lambda: sum(1 for e in events(out) if e["event"] == "push") > pushes, 60, "the new photo's push report")
    time.sleep(2)
    watched = [e.get("directories") for e in events(out) if e["event"] == "watching"]
    return {"files": files, "folders": watched[0] if watched else None, "caught_up_s": caught_up,
            "idle_cpu_percent": 100.0 * ticks / hz / wall, "rss_mib": idle_rss,
            "rss_after_one_photo_mib": status_kib(watch.pid, "VmRSS") / 1024.0, "catch_up_peak_mib": peak,
            "fallback": any(e["event"] == "fallback" for e in events(out))}


def rate_bytes(text):
    units = {"": 1024, "K": 1024, "M": 1 << 20, "G": 1 << 30}
    number = text.rstrip("KMGkmg")
    return float(number) * units[text[len(number):].upper()]


def bandwidth():
    root, laptop, library, received, serve = pair("bwlimit")
    limit = rate_bytes(bwlimit)
    size = int(limit * bw_seconds)
    with open(os.path.join(library, "movie.bin"), "wb") as handle:
        handle.write(os.urandom(size))
    sync_disks()
    started = time.monotonic()
    result = run(laptop, "push", library, "--to", "nas", "--bwlimit", bwlimit, "--json")
    seconds = time.monotonic() - started
    sent = sum(peer["chunkBytesSent"] for peer in json.loads(result.stdout)["peers"])
    return {"limit_bytes_per_s": limit, "bytes": sent, "seconds": seconds, "rate_over_limit": sent / seconds / limit}


def stop_all():
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
    children.clear()


def main():
    os.makedirs(work, exist_ok=True)
    try:
        log("latency: write to Receipt")
        samples = latency()
        log("bandwidth limit")
        bw = bandwidth()
        still = []
        for number in range(idle_runs):
            stop_all()  # nothing else running while a watch idles
            log(f"idle watch, run {number + 1} of {idle_runs}")
            still.append(idle())
    finally:
        stop_all()
    print(json.dumps({"latency_s": {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "runs": len(samples)},
                      "bwlimit": bw,
                      "idle": {"runs": still,
                               "median_rss_mib": statistics.median(run["rss_mib"] for run in still),
                               "median_rss_after_one_photo_mib": statistics.median(run["rss_after_one_photo_mib"] for run in still),
                               "median_catch_up_peak_mib": statistics.median(run["catch_up_peak_mib"] for run in still),
                               "median_cpu_percent": statistics.median(run["idle_cpu_percent"] for run in still),
                               "median_caught_up_s": statistics.median(run["caught_up_s"] for run in still)}}, indent=2))


main()
