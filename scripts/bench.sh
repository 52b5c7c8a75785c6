#!/usr/bin/env bash
# The performance targets (ARCHITECTURE.md, BENCHMARKS.md) side by side: lfsync against rsync (over ssh with aes128-gcm, and
# the rsync daemon) on the same corpus, in one run, on loopback. Starts every
# server it needs on high loopback ports and stops them all on exit.
#
#   scripts/bench.sh [BUILD_DIR]        (make bench)
#
# In the many-small-files scenarios (10 and 11) every timed run — lfsync's and
# rsync's alike — writes to a freshly made, journaled ext4 on a loop device
# (when run as root), as a real device's disk would be. This machine's own root
# file system has no journal, and there ext4 scans for recently freed inodes on
# every file it creates: after the previous run's 20,000 files were deleted,
# each create costs more, whichever tool comes next.
#
# Knobs: BENCH_SIZE_MIB (1024), BENCH_REPS (5), BENCH_BIG_MIB (4096),
#        BENCH_SMALL_FILES (100000), BENCH_REAL_FILES (20000), BENCH_HUGE_FILES (200000),
#        BENCH_DIR (bench-out/s9),
#        BENCH_FROM / BENCH_TO (1 / 12: which scenarios run)
set -euo pipefail
bin=$(cd "${1:-.build/release}" && pwd)
size_mib=${BENCH_SIZE_MIB:-1024}
reps=${BENCH_REPS:-5}
big_mib=${BENCH_BIG_MIB:-4096}
small_files=${BENCH_SMALL_FILES:-100000}
real_files=${BENCH_REAL_FILES:-20000}
huge_files=${BENCH_HUGE_FILES:-200000}
work=$(mkdir -p "${BENCH_DIR:-$PWD/bench-out/s9}" && cd "${BENCH_DIR:-$PWD/bench-out/s9}" && pwd)
lfsync="$bin/lfsync"
declare -A serve_pid
other_pids=()

cleanup() {
  for pid in "${serve_pid[@]}" "${other_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for mounted in "$work"/disk-*; do
    if mountpoint -q "$mounted"; then umount "$mounted" && rm -f "$mounted.img"; fi
  done
}
trap cleanup EXIT INT TERM

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$(now) - $1:.3f}')"; }
# CPU seconds (user + system) of a command and the children it waited for, from /usr/bin/time.
cpu_of() { local out=$1; shift; /usr/bin/time -f '%U %S' -o "$out" "$@"; }
cpu_seconds() { awk 'END {printf "%.2f", $1 + $2}' "$1"; }
sum() { python3 -c "import sys; print(f'{sum(map(float, sys.argv[1:])):.2f}')" "$@"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}' if $2 else 'n/a')"; }
json_field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(sum(p['$1'] for p in d['peers']))"; }
as() { local who=$1; shift; LFSYNC_HOME="$work/$who/state" "$lfsync" "$@"; }
device_id() { as "$1" id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["deviceID"])'; }

# ---------------------------------------------------------------- set-up
log "corpus: $size_mib MiB"
src="$work/laptop/Pictures"
mkdir -p "$src"
"$bin/lfsync-bench" corpus "$src" --size-mib "$size_mib" >&2
# The scanner trusts a file's cached manifest (and the sender skips re-hashing it) only
# once the file has been left alone for 3 s; a library being written right now is hashed
# again. Let the fresh corpus settle, then index it once, as an earlier push or a running
# `lfsync serve` would have: every timed push below starts from that cache.
sleep 3.5
corpus_bytes=$(du -sb --apparent-size "$src" | cut -f1)

# fresh_disk NAME GIB: a new, empty, journaled ext4 mounted at $work/disk-NAME (see the top).
fresh_disk() {
  local mounted="$work/disk-$1"
  mkdir -p "$mounted"
  if mountpoint -q "$mounted"; then umount "$mounted"; fi
  rm -rf "${mounted:?}"/* "$mounted.img"
  if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null; then
    truncate -s "${2}G" "$mounted.img"
    mkfs.ext4 -q -F "$mounted.img"
    mount -o loop "$mounted.img" "$mounted"
  fi
  echo "$mounted"
}
[ "$(id -u)" = 0 ] || log "not root: scenarios 10 and 11 write to this machine's own file system (see the top)"

port() { case $1 in d1) echo 18801;; d2) echo 18802;; d3) echo 18803;; esac; }
declare -A library   # a receiver's library, where it is not $work/NAME/Pictures
library_of() { echo "${library[$1]:-$work/$1/Pictures}"; }
start_serve() {   # start_serve NAME [OPEN-FILE LIMIT]
  local name=$1 limit=${2:-$(ulimit -n)}
  mkdir -p "$(library_of "$name")" "$work/$name"
  (ulimit -n "$limit" && LFSYNC_HOME="$work/$name/state" exec "$lfsync" serve "$(library_of "$name")" \
    --listen "127.0.0.1:$(port "$name")" --no-advertise >/dev/null 2>>"$work/$name/serve.log") &
  serve_pid[$name]=$!
  # serve indexes its library before it listens: allow for a large one.
  for _ in $(seq 1 1200); do grep -q "listening on" "$work/$name/serve.log" 2>/dev/null && return; sleep 0.1; done
  log "serve $name did not start"; exit 1
}
stop_serve() { kill "${serve_pid[$1]}" 2>/dev/null || true; wait "${serve_pid[$1]}" 2>/dev/null || true; : > "$work/$1/serve.log"; }
reset_device() {   # an empty receiver: library, staging and its index gone
  stop_serve "$1"
  rm -rf "$(library_of "$1")" "$work/$1/state/libraries"
  start_serve "$1"
}
# The sender forgets its index of a library: the next push is a first push, hashing everything.
forget_index() { rm -rf "$work/laptop/state/libraries"; }

# Receivers start empty, whatever an earlier run left.
rm -rf "$work"/d[123]/Pictures "$work"/d[123]/state/libraries
as laptop init --name laptop >/dev/null
as laptop scan "$src" >/dev/null
for name in d1 d2 d3; do
  as "$name" init --name "$name" >/dev/null
  as laptop trust "$(device_id "$name")" --name "$name" --address "127.0.0.1:$(port "$name")" >/dev/null
  as "$name" trust "$(device_id laptop)" --name laptop --auto-accept >/dev/null
  : > "$work/$name/serve.log"
  start_serve "$name"
done

# rsync daemon and an sshd with throwaway keys, loopback only.
mkdir -p "$work/rsync" "$work/ssh" /run/sshd
cat > "$work/rsync/rsyncd.conf" <<CONF
address = 127.0.0.1
port = 18873
use chroot = no
pid file = $work/rsync/rsyncd.pid
[dest]
  path = $work/rsync/dest
  read only = false
  uid = root
  gid = root
CONF
mkdir -p "$work/rsync/dest"
rsync --daemon --no-detach --config="$work/rsync/rsyncd.conf" & other_pids+=($!)
rm -f "$work/ssh/host" "$work/ssh/client"
ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/host"
ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/client"
cp "$work/ssh/client.pub" "$work/ssh/authorized_keys"
cat > "$work/ssh/sshd_config" <<CONF
Port 18822
ListenAddress 127.0.0.1
HostKey $work/ssh/host
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/ssh/sshd.pid
Ciphers aes128-gcm@openssh.com
CONF
/usr/sbin/sshd -D -f "$work/ssh/sshd_config" & other_pids+=($!)
ssh_cmd="ssh -p 18822 -i $work/ssh/client -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -c aes128-gcm@openssh.com"
sleep 1
# What lfsync leaves out by default (its built-in ignore rules): rsync is told the same, so
# both move the same files, and a receiver's tree is compared with the source without them.
junk=(.DS_Store '._*' Thumbs.db desktop.ini @eaDir .thumbnails '.Trash-*' .lfsync)
rsync_excludes=(); diff_excludes=()
for pattern in "${junk[@]}"; do rsync_excludes+=(--exclude "$pattern"); diff_excludes+=(-x "$pattern"); done
same_tree() { diff -r "${diff_excludes[@]}" "$1" "$2" >/dev/null; }
rsync_ssh() { rsync -a --stats "${rsync_excludes[@]}" -e "$ssh_cmd" "$1/" "root@127.0.0.1:$2/" | awk '/Total bytes sent/ {gsub(",", "", $4); print $4}'; }
# rsync followed by sync: the durability lfsync gives every file before its receipt, for the same work.
rsync_ssh_sync() { rsync_ssh "$@" >/dev/null; sync; }
rsync_daemon() { rsync -a --stats "${rsync_excludes[@]}" "$1/" "rsync://127.0.0.1:18873/dest/$2/" | awk '/Total bytes sent/ {gsub(",", "", $4); print $4}'; }
lfsync_push() { as laptop push "$@" --batch --json; }
# Before each timed run: write back what the previous run left dirty, so no
# tool pays for another's disk writes (lfsync fsyncs every file it receives,
# rsync does not, so leftover dirty pages would otherwise land on lfsync).
settle() { sync; }

results="$work/results.md"
from=${BENCH_FROM:-1}
to=${BENCH_TO:-12}
# Scenario N runs when BENCH_FROM <= N <= BENCH_TO.
want() { [ "$from" -le "$1" ] && [ "$1" -le "$to" ]; }
: > "$results"
row() { printf '%s\n' "$*" >> "$results"; }
row "| scenario | lfsync | rsync | ratio (lfsync/rsync) | target | bytes on the wire |"
row "|---|---|---|---|---|---|"

d1_library=$(library_of d1)

# ---------------------------------------------------------------- 1. cold push to one peer, library indexed
if want 1; then
log "1. cold push to one peer, library already indexed"
t_l=(); t_s=(); t_ss=(); t_d=(); b_l=0; b_s=0
for _ in $(seq 1 "$reps"); do
  reset_device d1
  settle; t=$(now); b_l=$(lfsync_push "$src" --to d1 | json_field chunkBytesSent); t_l+=("$(elapsed "$t")")
  rm -rf "$work/ssh-dest"; settle; t=$(now); b_s=$(rsync_ssh "$src" "$work/ssh-dest"); t_s+=("$(elapsed "$t")")
  rm -rf "$work/ssh-dest"; settle; t=$(now); rsync_ssh_sync "$src" "$work/ssh-dest"; t_ss+=("$(elapsed "$t")")
  rm -rf "$work/rsync/dest/cold"; settle; t=$(now); rsync_daemon "$src" cold >/dev/null; t_d+=("$(elapsed "$t")")
  log "   lfsync ${t_l[-1]} s, rsync-ssh ${t_s[-1]} s, + sync ${t_ss[-1]} s, rsync daemon ${t_d[-1]} s"
done
same_tree "$src" "$d1_library" || { log "d1 differs from the source"; exit 1; }
l=$(median "${t_l[@]}"); s=$(median "${t_s[@]}"); ss=$(median "${t_ss[@]}"); d=$(median "${t_d[@]}")
row "| cold push, 1 peer, indexed | ${l} s | ssh ${s} s / ssh + sync ${ss} s / daemon ${d} s | $(ratio "$l" "$s") vs ssh, $(ratio "$l" "$ss") vs ssh + sync, $(ratio "$l" "$d") vs daemon | ≤ 0.8 vs ssh (median of ≥ 5 pairs) | lfsync $b_l B, rsync-ssh $b_s B |"
fi

# ---------------------------------------------------------------- 2. first push of a library never scanned
if want 2; then
log "2. first push of a library never scanned (hashing and sending overlap)"
t_l=(); t_s=(); t_ss=()
for _ in $(seq 1 "$reps"); do
  reset_device d1; forget_index
  settle; t=$(now); lfsync_push "$src" --to d1 >/dev/null; t_l+=("$(elapsed "$t")")
  rm -rf "$work/ssh-dest"; settle; t=$(now); rsync_ssh "$src" "$work/ssh-dest" >/dev/null; t_s+=("$(elapsed "$t")")
  rm -rf "$work/ssh-dest"; settle; t=$(now); rsync_ssh_sync "$src" "$work/ssh-dest"; t_ss+=("$(elapsed "$t")")
  log "   lfsync ${t_l[-1]} s, rsync-ssh ${t_s[-1]} s, + sync ${t_ss[-1]} s"
done
same_tree "$src" "$d1_library" || { log "d1 differs from the source"; exit 1; }
l=$(median "${t_l[@]}"); s=$(median "${t_s[@]}"); ss=$(median "${t_ss[@]}")
row "| first push, library never scanned | ${l} s | ssh ${s} s / ssh + sync ${ss} s | $(ratio "$l" "$s") vs ssh, $(ratio "$l" "$ss") vs ssh + sync | ≤ 0.9 vs ssh | |"
fi

# ---------------------------------------------------------------- 3. broadcast to three peers: the sender's CPU
if want 3; then
log "3. broadcast to three peers: CPU seconds on the sending device"
c_l=(); c_s=(); t_l=()
for _ in $(seq 1 "$reps"); do
  for name in d1 d2 d3; do reset_device "$name"; done
  settle; t=$(now); cpu_of "$work/cpu-lfsync" env LFSYNC_HOME="$work/laptop/state" "$lfsync" push "$src" --to d1,d2,d3 --batch --json >/dev/null \
    < /dev/null 2>/dev/null || true
  t_l+=("$(elapsed "$t")"); c_l+=("$(cpu_seconds "$work/cpu-lfsync")")
  # The sender side of rsync over ssh is the rsync client and the ssh client it waits for.
  runs=()
  for n in 1 2 3; do
    rm -rf "$work/ssh-dest-$n"; settle
    cpu_of "$work/cpu-rsync-$n" rsync -a "${rsync_excludes[@]}" -e "$ssh_cmd" "$src/" "root@127.0.0.1:$work/ssh-dest-$n/"
    runs+=("$(cpu_seconds "$work/cpu-rsync-$n")")
  done
  c_s+=("$(sum "${runs[@]}")")
  log "   lfsync sender ${c_l[-1]} CPU s (${t_l[-1]} s wall), three rsync-ssh senders ${c_s[-1]} CPU s"
done
for name in d1 d2 d3; do same_tree "$src" "$(library_of "$name")" || { log "$name differs from the source"; exit 1; }; done
l=$(median "${c_l[@]}"); s=$(median "${c_s[@]}")
row "| broadcast to 3 peers: sender CPU | ${l} CPU s ($(median "${t_l[@]}") s wall) | 3 × rsync-ssh sender side ${s} CPU s | $(ratio "$l" "$s") | ≤ 0.3 | |"
fi

# ---------------------------------------------------------------- 4. repeat push, nothing changed
if want 4; then
log "4. repeat push, nothing changed"
reset_device d1
lfsync_push "$src" --to d1 >/dev/null
rm -rf "$work/ssh-dest"; rsync_ssh "$src" "$work/ssh-dest" >/dev/null
rsync_daemon "$src" cold >/dev/null
t_l=(); t_s=(); t_d=(); b_l=0
for _ in $(seq 1 "$reps"); do
  settle; t=$(now); b_l=$(lfsync_push "$src" --to d1 | json_field chunkBytesSent); t_l+=("$(elapsed "$t")")
  settle; t=$(now); rsync_ssh "$src" "$work/ssh-dest" >/dev/null; t_s+=("$(elapsed "$t")")
  settle; t=$(now); rsync_daemon "$src" cold >/dev/null; t_d+=("$(elapsed "$t")")
done
l=$(median "${t_l[@]}"); s=$(median "${t_s[@]}"); d=$(median "${t_d[@]}")
row "| repeat push, nothing changed | ${l} s | ssh ${s} s / daemon ${d} s | $(ratio "$l" "$s") vs ssh, $(ratio "$l" "$d") vs daemon | ≤ 2.0 vs daemon, 0 chunk bytes | lfsync $b_l chunk bytes |"
fi

# ---------------------------------------------------------------- 5. whole library renamed/moved
if want 5; then
log "5. whole library renamed"
# Both receivers hold the corpus before the rename, also when this scenario runs alone
# (BENCH_FROM=5), and rsync's holds nothing a run before left there.
lfsync_push "$src" --to d1 >/dev/null
rm -rf "$work/rsync/dest/renamed"; rsync_daemon "$src" renamed >/dev/null
mv "$src/DCIM" "$src/Moved to NAS"
b_l=$(lfsync_push "$src" --to d1 | json_field chunkBytesSent)
b_d=$(rsync_daemon "$src" renamed)
mv "$src/Moved to NAS" "$src/DCIM"
row "| whole library renamed | $(python3 -c "print(f'{100*$b_l/$corpus_bytes:.3f} %')") of corpus | daemon $(python3 -c "print(f'{100*$b_d/$corpus_bytes:.1f} %')") | | ≤ 1 % | lfsync $b_l B, rsync $b_d B |"
fi

# ---------------------------------------------------------------- 6. resume after kill -9 at ~50 %
if want 6; then
log "6. resume after kill -9 of the receiver at ~50 %"
reset_device d1
lfsync_push "$src" --to d1 > "$work/resume-1.json" 2>/dev/null &
push_pid=$!
half=$((corpus_bytes / 2))
while kill -0 "$push_pid" 2>/dev/null; do
  # du fails when a staged file is renamed under it; that is no reason to stop the benchmark.
  have=$(du -sB1 "$d1_library" 2>/dev/null | cut -f1 || true)
  [ "${have:-0}" -ge "$half" ] && break
  sleep 0.05
done
kill -9 "${serve_pid[d1]}" 2>/dev/null || true
wait "$push_pid" 2>/dev/null || true
kept=$(du -sB1 "$d1_library" 2>/dev/null | cut -f1 || true)
: > "$work/d1/serve.log"; start_serve d1
b_2=$( (lfsync_push "$src" --to d1 || true) | json_field chunkBytesSent)
missing=$((corpus_bytes - kept))
extra=$((b_2 > missing ? b_2 - missing : 0))
resume_exact=yes
same_tree "$src" "$d1_library" || resume_exact=NO
row "| resume after kill -9 at ~50 % | re-sent beyond missing: $(python3 -c "print(f'{100*$extra/$corpus_bytes:.2f} %')") of corpus | | | ≤ 2 % | receiver kept $kept B on disk, second push sent $b_2 B; byte-exact after: $resume_exact |"
fi

# ---------------------------------------------------------------- 7. 1 KiB inserted near the start of 100 photos
if want 7; then
log "7. 1 KiB inserted near the start of 100 photos"
edited=$(find "$src" -name '*.HEIC' | sort | head -100)
edited_bytes=$(echo "$edited" | xargs du -cb --apparent-size | tail -1 | cut -f1)
echo "$edited" | python3 -c '
import sys
for path in sys.stdin.read().split("\n"):
    if not path: continue
    data = open(path, "rb").read()
    open(path, "wb").write(data[:4096] + bytes(range(256)) * 4 + data[4096:])'
b_l=$(lfsync_push "$src" --to d1 | json_field chunkBytesSent)
b_d=$(rsync_daemon "$src" cold)
row "| 1 KiB inserted near the start of 100 photos | $(python3 -c "print(f'{100*$b_l/$edited_bytes:.1f} %')") of those files | daemon $(python3 -c "print(f'{100*$b_d/$edited_bytes:.1f} %')") | | ≤ 10 % | lfsync $b_l B, rsync $b_d B, files $edited_bytes B |"
fi

# ---------------------------------------------------------------- 8. peak RSS, one big file
if want 8; then
log "8. peak RSS with one ${big_mib} MiB file"
big="$work/big"
rm -rf "$big"; mkdir -p "$big"
head -c "$((big_mib * 1048576))" /dev/urandom > "$big/video.mov"
reset_device d1
LFSYNC_HOME="$work/laptop/state" /usr/bin/time -v "$lfsync" push "$big" --to d1 --batch 2> "$work/big-time.txt" >/dev/null || true
sender_rss=$(awk '/Maximum resident set size/ {print $6}' "$work/big-time.txt")
receiver_rss=$(awk '/VmHWM/ {print $2}' "/proc/${serve_pid[d1]}/status")
cmp "$big/video.mov" "$d1_library/video.mov" || { log "big file differs"; exit 1; }
row "| peak RSS, one $big_mib MiB file | sender $((sender_rss / 1024)) MiB, receiver $((receiver_rss / 1024)) MiB | | | ≤ 100 MiB each | |"
rm -rf "$big"
fi

# ---------------------------------------------------------------- 9. rescan of 100k unchanged files
if want 9; then
log "9. rescan of $small_files unchanged files"
"$bin/lfsync-bench" small-files "$work/small" --count "$small_files"
sleep 3.5   # settle, as above
# `push --dry-run` rescans (from the cache) and checks the ledger without printing 100k lines.
as laptop push "$work/small" --to d1 --dry-run >/dev/null 2>&1
t_l=()
for _ in $(seq 1 "$reps"); do t=$(now); as laptop push "$work/small" --to d1 --dry-run >/dev/null 2>&1; t_l+=("$(elapsed "$t")"); done
row "| rescan of $small_files unchanged files | $(median "${t_l[@]}") s | | | ≤ 3 s | |"
fi

# ---------------------------------------------------------------- 10. 20,000 small files in nested folders
# Every timed run writes to a fresh file system of its own (see the top).
if want 10; then
log "10. $real_files small files (1–48 KB, nested folders, real-shaped: copies, shared sidecars, empty files)"
real="$work/real"
[ -d "$real" ] || "$bin/lfsync-bench" real-library "$real" --files "$real_files" >&2
sleep 3.5   # settle, as above
real_bytes=$(du -sb --apparent-size "$real" | cut -f1)
fresh_receiver() {   # d1 serving an empty library on a fresh file system
  stop_serve d1
  rm -rf "$work/d1/state/libraries"
  # A folder name of its own each time: d1's ledger keeps each library's path history, and a
  # fresh disk at a path it already knows is a library that lost its files (ARCHITECTURE.md,
  # Known gaps), not the empty receiver this scenario times.
  library[d1]="$(fresh_disk d1 4)/Pictures-$RANDOM$RANDOM"
  start_serve d1
}
t_f=(); t_i=(); t_s=(); t_ss=()
for _ in $(seq 1 "$reps"); do
  fresh_receiver; forget_index
  settle; t=$(now); lfsync_push "$real" --to d1 >/dev/null; t_f+=("$(elapsed "$t")")
  fresh_receiver
  settle; t=$(now); lfsync_push "$real" --to d1 >/dev/null; t_i+=("$(elapsed "$t")")
  dest=$(fresh_disk rsync 4)
  settle; t=$(now); rsync_ssh "$real" "$dest/real" >/dev/null; t_s+=("$(elapsed "$t")")
  dest=$(fresh_disk rsync 4)
  settle; t=$(now); rsync_ssh_sync "$real" "$dest/real"; t_ss+=("$(elapsed "$t")")
  log "   lfsync first push ${t_f[-1]} s, indexed ${t_i[-1]} s, rsync-ssh ${t_s[-1]} s, + sync ${t_ss[-1]} s"
done
same_tree "$real" "$(library_of d1)" || { log "d1 differs from the small-file library"; exit 1; }
f=$(median "${t_f[@]}"); i=$(median "${t_i[@]}"); s=$(median "${t_s[@]}"); ss=$(median "${t_ss[@]}")
row "| $real_files small files ($((real_bytes / 1048576)) MiB), cold: first push | ${f} s | ssh ${s} s / ssh + sync ${ss} s | $(ratio "$f" "$s") vs ssh, $(ratio "$f" "$ss") vs ssh + sync | ≤ 1.0 vs ssh | |"
row "| $real_files small files, cold: library indexed | ${i} s | ssh ${s} s / ssh + sync ${ss} s | $(ratio "$i" "$s") vs ssh, $(ratio "$i" "$ss") vs ssh + sync | ≤ 1.0 vs ssh | |"
# Repeat: both receivers already hold everything.
t_l=(); t_s=(); b_l=0
for _ in $(seq 1 "$reps"); do
  settle; t=$(now); b_l=$(lfsync_push "$real" --to d1 | json_field chunkBytesSent); t_l+=("$(elapsed "$t")")
  settle; t=$(now); rsync_ssh "$real" "$dest/real" >/dev/null; t_s+=("$(elapsed "$t")")
done
l=$(median "${t_l[@]}"); s=$(median "${t_s[@]}")
row "| $real_files small files, repeat, nothing changed | ${l} s | ssh no-op ${s} s | $(ratio "$l" "$s") | ≤ 0.8 vs ssh's no-op, 0 chunk bytes | lfsync $b_l chunk bytes |"
stop_serve d1; unset 'library[d1]'; start_serve d1
fi

# ---------------------------------------------------------------- 11 and 12. 200,000 files
# many_files N NAME MAX_BYTES TARGET_RATIO TARGET_RSS: a real-shaped library of N files of at
# most MAX_BYTES each, first push at ulimit -n 1024 on both sides, to a fresh ext4.
many_files() {
local count=$1 name=$2 max_bytes=$3 target_ratio=$4 target_rss=$5
local huge="$work/$name"
[ -d "$huge" ] || "$bin/lfsync-bench" real-library "$huge" --files "$count" --max-bytes "$max_bytes" >&2
sleep 3.5   # settle, as above
local huge_bytes; huge_bytes=$(du -sb --apparent-size "$huge" | cut -f1)
stop_serve d1
rm -rf "$work/d1/state/libraries"
library[d1]="$(fresh_disk d1 8)/Pictures"
forget_index
start_serve d1 1024
settle; local t; t=$(now)
(ulimit -n 1024 && LFSYNC_HOME="$work/laptop/state" /usr/bin/time -v "$lfsync" push "$huge" --to d1 --batch --json \
  > "$work/$name.json" 2> "$work/$name-time.txt") || log "   push exited $? ($(head -c 300 "$work/$name.json"))"
local t_l; t_l=$(elapsed "$t")
local sender_rss; sender_rss=$(awk '/Maximum resident set size/ {print $6}' "$work/$name-time.txt")
local receiver_rss; receiver_rss=$(awk '/VmHWM/ {print $2}' "/proc/${serve_pid[d1]}/status")
local exact=yes
same_tree "$huge" "$(library_of d1)" || exact=NO
local dest; dest=$(fresh_disk rsync 8); settle; t=$(now); rsync_ssh "$huge" "$dest/huge" >/dev/null; local t_s; t_s=$(elapsed "$t")
dest=$(fresh_disk rsync 8); settle; t=$(now); rsync_ssh_sync "$huge" "$dest/huge"; local t_ss; t_ss=$(elapsed "$t")
log "   lfsync $t_l s (sender $((sender_rss / 1024)) MiB, receiver $((receiver_rss / 1024)) MiB), rsync-ssh $t_s s, rsync-ssh + sync $t_ss s"
row "| $count files of at most $max_bytes B ($((huge_bytes / 1048576)) MiB), first push, ulimit -n 1024 | $t_l s; peak RSS sender $((sender_rss / 1024)) MiB, receiver $((receiver_rss / 1024)) MiB | ssh $t_s s / ssh + sync $t_ss s | $(ratio "$t_l" "$t_s") vs ssh, $(ratio "$t_l" "$t_ss") vs ssh + sync | completes; ≤ ${target_ratio}× ssh; ≤ $target_rss MiB each | byte-exact: $exact |"
stop_serve d1; unset 'library[d1]'; start_serve d1
}
if want 11; then
log "11. $huge_files files of a real-shaped library (a few KB each), at ulimit -n 1024 on both sides"
many_files "$huge_files" huge 6000 1.3 200
fi
# ---------------------------------------------------------------- 12. 200,000 tiny files
if want 12; then
log "12. $huge_files tiny files (200–2,500 B), at ulimit -n 1024 on both sides"
many_files "$huge_files" tiny 2500 1.5 160
fi

printf '\ncorpus: %s bytes in %s files; %s repetitions (median); %s\n\n' "$corpus_bytes" "$(find "$src" -type f | wc -l)" "$reps" "$(date -u +%F)"
cat "$results"
