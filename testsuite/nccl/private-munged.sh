# Sourced by the run-with-*schedd.sh scripts: a private temp dir $T, a
# private munged on $T/munge.sock (its pid in MUNGED_PID), a bounded
# wait_for, and a trap that stops munged and $SCHEDD_PID and removes $T on
# exit. Call: T_PREFIX=name; . private-munged.sh (T_PREFIX names the temp dir).
T=$(mktemp -d "${TMPDIR:-/tmp}/${T_PREFIX:-harmonics}.XXXXXX") || exit 1
MUNGED_PID= SCHEDD_PID=
cleanup() {
  [ -n "$SCHEDD_PID" ] && kill "$SCHEDD_PID" 2>/dev/null
  [ -n "$MUNGED_PID" ] && kill "$MUNGED_PID" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT INT TERM

wait_for() {  # wait_for FILE: up to 10 s
  i=0
  while [ ! -e "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}

chmod 700 "$T"
head -c 1024 /dev/urandom > "$T/munge.key" && chmod 400 "$T/munge.key"
munged -f -F --socket="$T/munge.sock" --key-file="$T/munge.key" --pid-file="$T/munged.pid" \
  --log-file="$T/munged.log" --seed-file="$T/munged.seed" 2>"$T/munged.err" &
MUNGED_PID=$!
wait_for "$T/munge.sock" || { echo "munged did not start:"; cat "$T/munged.err"; exit 1; }
