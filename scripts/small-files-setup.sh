# Sourced by the small-file scripts (profile-small-files.sh, bench-ab-small-files.sh):
# a 20,000-file real-shaped library, a sender "laptop" and a receiver "d1" that trust
# each other, and the library indexed and settled, as scenario 10 of scripts/bench.sh.
#
#   small_files_setup BIN_DIR WORK_DIR PORT
#
# Defines `as NAME COMMAND...` (lfsync with NAME's state under WORK_DIR).
small_files_setup() {
  local bin=$1 w=$2 port=$3
  case $w in *[[:space:]]*) echo "WORK_DIR must not contain spaces" >&2; return 1;; esac
  mkdir -p "$w"
  as() { local who=$1; shift; LFSYNC_HOME="$w/$who/state" "$bin/lfsync" "$@"; }
  [ -d "$w/real" ] || "$bin/lfsync-bench" real-library "$w/real" --files 20000 >&2
  if [ ! -d "$w/laptop/state" ]; then
    as laptop init --name laptop >/dev/null; as d1 init --name d1 >/dev/null
    local d1id lid
    d1id=$(as d1 id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["deviceID"])')
    lid=$(as laptop id --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["deviceID"])')
    as laptop trust "$d1id" --name d1 --address "127.0.0.1:$port" >/dev/null
    as d1 trust "$lid" --name laptop --auto-accept >/dev/null
  fi
  # The scanner trusts a cached manifest only once a file has been left alone for 3 s.
  sleep 3.5; as laptop scan "$w/real" >/dev/null
}
