#!/usr/bin/env python3
"""Sync figures for BENCHMARKS.md (issue 44), with real processes on loopback:

  1. edit latency: a 1 KiB sidecar edited in a library of SYNC_FILES files, from its last
     write to the peer's file holding the new bytes at the same path, through
     `watch --settle SYNC_SETTLE` and `serve`; median of SYNC_RUNS; and what travelled
     (chunk bytes: the push's offers and the sync's chunk requests, from `watch --json`);
  2. history cost: a first push of HISTORY_FILES files to a `serve` — peak RSS of both
     processes (VmHWM) and both ledgers' size on disk — for each BUILD_DIR given, so two
     builds (before and after path versions) are compared in one run, alternating.

    scripts/bench-sync.py BUILD_DIR [OLD_BUILD_DIR]

Part 1 runs with the first build only (an older one makes a conflict copy instead of
updating). Knobs (environment): SYNC_FILES (100000), SYNC_RUNS (20), SYNC_SETTLE (1),
HISTORY_FILES (200000), HISTORY_ROUNDS (2), BENCH_DIR (bench-out/sync), SKIP_LATENCY, SKIP_HISTORY.
"""
import json, os, shutil, signal, statistics, subprocess, sys, time

builds = [os.path.abspath(b) for b in sys.argv[1:]] or [os.path.abspath(".build/release")]
work = os.path.abspath(os.environ.get("BENCH_DIR", "bench-out/sync"))
files = int(os.environ.get("SYNC_FILES", "100000"))
runs = int(os.environ.get("SYNC_RUNS", "20"))
settle = os.environ.get("SYNC_SETTLE", "1")
history_files = int(os.environ.get("HISTORY_FILES", "200000"))
rounds = int(os.environ.get("HISTORY_ROUNDS", "2"))
children = []


def log(text):
    print(time.strftime("%H:%M:%S"), text, file=sys.stderr, flush=True)


def run(build, home, *args, check=True):
    env = dict(os.environ, LFSYNC_HOME=home, NO_COLOR="1")
    result = subprocess.run([os.path.join(build, "lfsync"), *args], env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"lfsync {' '.join(args)}: exit {result.returncode}: {result.stderr}")
    return result


def start(build, home, args, out, err):
    env = dict(os.environ, LFSYNC_HOME=home, NO_COLOR="1")
    process = subprocess.Popen([os.path.join(build, "lfsync"), *args], env=env, stdout=open(out, "w"), stderr=open(err, "w"))
    children.append(process)
    return process


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise SystemExit(f"timed out waiting for {what}")


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def pair(build, root, serve_extra=()):
    """laptop and nas homes, trusted both ways; nas serving ROOT/nas-lib. Returns (laptop home, nas home, serve, nas lib)."""
    laptop, nas = os.path.join(root, "laptop"), os.path.join(root, "nas")
    library = os.path.join(root, "nas-lib")
    os.makedirs(library, exist_ok=True)
    run(build, laptop, "init", "--name", "laptop")
    run(build, nas, "init", "--name", "nas")
    laptop_id = json.loads(run(build, laptop, "id", "--json").stdout)["deviceID"]
    nas_id = json.loads(run(build, nas, "id", "--json").stdout)["deviceID"]
    run(build, nas, "trust", laptop_id, "--name", "laptop", "--auto-accept")
    log_path = os.path.join(root, "serve.err")
    serve = start(build, nas, ["serve", library, "--listen", "127.0.0.1:0", "--no-advertise", *serve_extra],
                  os.path.join(root, "serve.out"), log_path)
    address = wait_for(lambda: next((line.split("listening on ")[1].split()[0] for line in open(log_path) if "listening on " in line), None),
                       120, "serve to listen")
    run(build, laptop, "trust", nas_id, "--name", "nas", "--address", address)
    return laptop, nas, serve, library


def vm_hwm(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def ledger_bytes(home):
    return sum(os.path.getsize(os.path.join(home, name)) for name in os.listdir(home) if name.startswith("ledger.sqlite"))


def latency(build):
    root = os.path.join(work, "latency")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    library = os.path.join(root, "laptop-lib")
    log(f"latency: a library of {files} files")
    subprocess.run([os.path.join(build, "lfsync-bench"), "real-library", library, "--files", str(files)], check=True, capture_output=True)
    sidecar_rel = "Edits/IMG_9999.xmp"
    sidecar = os.path.join(library, sidecar_rel)
    os.makedirs(os.path.dirname(sidecar), exist_ok=True)
    with open(sidecar, "wb") as f:
        f.write(b"<x:xmpmeta rating='0'>" + b"." * (1024 - 26) + b"</x>")
    subprocess.run(["find", library, "-type", "f", "-exec", "touch", "-d", "2 hours ago", "{}", "+"], check=True)
    laptop, nas, serve, nas_library = pair(build, root)
    first = time.monotonic()
    run(build, laptop, "push", library, "--to", "nas")
    log(f"latency: first push {time.monotonic() - first:.1f} s")
    out, err = os.path.join(root, "watch.out"), os.path.join(root, "watch.err")
    watch = start(build, laptop, ["watch", library, "--to", "nas", "--json", "--settle", settle], out, err)
    wait_for(lambda: '"event":"watching"' in open(out).read(), 300, "watch to start")
    time.sleep(5)
    target = os.path.join(nas_library, sidecar_rel)
    results, travelled = [], []
    for index in range(runs):
        body = (b"<x:xmpmeta rating='%03d'>" % (index + 1)).ljust(1020, b".") + b"</x>"
        assert len(body) == 1024
        seen = len(open(out).read().splitlines())
        with open(sidecar, "wb") as f:
            f.write(body)
        written = time.monotonic()
        wait_for(lambda: os.path.exists(target) and open(target, "rb").read() == body, 120, f"edit {index + 1} to arrive")
        results.append(time.monotonic() - written)
        # What travelled for it: the push's chunk bytes and the sync's (reported after it).
        def events():
            lines = open(out).read().splitlines()[seen:]
            return [json.loads(line) for line in lines if line.startswith("{")]
        wait_for(lambda: any(e.get("event") == "sync" for e in events()), 60, "the sync event")
        pushed = sum(e.get("chunkBytesSent") or 0 for e in events() if e.get("event") == "push")
        fetched = sum(e.get("bytesFetched") or 0 for e in events() if e.get("event") == "sync")
        travelled.append(pushed + fetched)
        conflicts = [name for name in os.listdir(os.path.dirname(target)) if "(conflict " in name]
        if conflicts:
            raise SystemExit(f"a conflict copy appeared: {conflicts}")
        log(f"latency: edit {index + 1}: {results[-1]:.3f} s, {travelled[-1]} chunk bytes")
        time.sleep(1.5)
    stop(watch)
    stop(serve)
    return results, travelled


def history(build, round_index):
    root = os.path.join(work, f"history-{round_index}-{os.path.basename(os.path.dirname(build)) or 'build'}-{abs(hash(build)) % 10000}")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    source = os.path.join(work, "history-source")
    if not os.path.isdir(source):
        log(f"history: a library of {history_files} files")
        subprocess.run([os.path.join(build, "lfsync-bench"), "real-library", source, "--files", str(history_files)], check=True, capture_output=True)
        subprocess.run(["find", source, "-type", "f", "-exec", "touch", "-d", "2 hours ago", "{}", "+"], check=True)
    laptop, nas, serve, _ = pair(build, root)
    subprocess.run(["sync"])
    env = dict(os.environ, LFSYNC_HOME=laptop, NO_COLOR="1")
    started = time.monotonic()
    push = subprocess.Popen(["/usr/bin/time", "-f", "%M", os.path.join(build, "lfsync"), "push", source, "--to", "nas"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, stderr = push.communicate()
    seconds = time.monotonic() - started
    if push.returncode != 0:
        raise SystemExit(f"push: exit {push.returncode}: {stderr[-2000:]}")
    push_rss = int(stderr.strip().splitlines()[-1]) / 1024
    serve_rss = vm_hwm(serve.pid)
    stop(serve)
    return {"seconds": seconds, "push_rss": push_rss, "serve_rss": serve_rss,
            "laptop_ledger": ledger_bytes(laptop), "nas_ledger": ledger_bytes(nas)}


def main():
    os.makedirs(work, exist_ok=True)
    try:
        if not os.environ.get("SKIP_LATENCY"):
            results, travelled = latency(builds[0])
            print(f"edit latency, {files} files, --settle {settle}: median {statistics.median(results):.3f} s of {len(results)} "
                  f"(min {min(results):.3f}, max {max(results):.3f}); chunk bytes per edit: median {statistics.median(travelled):.0f} "
                  f"(min {min(travelled)}, max {max(travelled)}) for a 1024-byte file")
        if not os.environ.get("SKIP_HISTORY"):
            table = {build: [] for build in builds}
            for round_index in range(rounds):
                for build in (builds if round_index % 2 == 0 else list(reversed(builds))):
                    log(f"history: round {round_index + 1}, {build}")
                    table[build].append(history(build, round_index))
                    log(f"  {table[build][-1]}")
            for build, rows in table.items():
                def med(key):
                    return statistics.median(row[key] for row in rows)
                print(f"{build}: first push of {history_files} files {med('seconds'):.1f} s; peak RSS push {med('push_rss'):.0f} MiB, "
                      f"serve {med('serve_rss'):.0f} MiB; ledgers laptop {med('laptop_ledger') / 2**20:.1f} MiB, nas {med('nas_ledger') / 2**20:.1f} MiB "
                      f"(median of {len(rows)})")
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


main()
