# Shared set-up of the daemon system tests: a private munged (own key, socket
# and directories), a 2-leaf fabric (n[1-4] under rack1, n[5-8] under rack2),
# harmonics.conf on free loopback ports, and helpers to start the daemons.
# Everything lives in one temp dir and is torn down by the EXIT trap.
# Source with SRC and BUILD set to the source and build tree roots.
set -u
T=$(mktemp -d /tmp/hx-daemons.XXXXXX)
chmod 755 "$T"
PIDS=()
HX_CLIENT=$BUILD/testsuite/system/daemons/hx_testclient
SCHEDD=$BUILD/src/sched/harmonics-schedd
COORDD=$BUILD/src/coord/harmonics-coordd
CTL=$BUILD/src/coord/harmonicsctl

for b in "$HX_CLIENT" "$SCHEDD" "$COORDD" "$CTL"; do
    [ -x "$b" ] || { echo "SKIP: $b not built (libevent/protobuf-c missing, or make check not run)"; exit 77; }
done
command -v munged >/dev/null || { echo "SKIP: munged not installed"; exit 77; }

# HX_KEEP=DIR keeps a failing run's logs and outputs in DIR (for flakes).
fail() {
    echo "FAIL: $*" >&2
    for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }; done >&2
    [ -n "${HX_KEEP:-}" ] && mkdir -p "$HX_KEEP" && cp "$T"/*.log "$T"/*.out "$HX_KEEP"/ 2>/dev/null
    exit 1
}

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    [ -f "$T/munge/munged.pid" ] && kill -TERM "$(cat "$T/munge/munged.pid")" 2>/dev/null
    sleep 0.2
    rm -rf "$T"
}
trap cleanup EXIT

# A TCP port nobody listens on (the kernel picks, we release it at once),
# and none this test was given before: released ports can come back, and two
# daemons on one port fail to start (it happened, 1 run in 60).
free_port() {
    local p
    while :; do
        p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
        grep -qx "$p" "$T/ports" 2>/dev/null || break
    done
    echo "$p" >> "$T/ports"
    echo "$p"
}

# wait_for CMD...: retry CMD for up to $WAIT_S seconds (default 10).
wait_for() {
    local deadline=$(( $(date +%s) + ${WAIT_S:-10} ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge "$deadline" ] && return 1
        sleep 0.1
    done
}

start_munged() {
    mkdir -p "$T/munge"
    chmod 700 "$T/munge"
    mkdir -p "$T/munge-run"
    chmod 755 "$T/munge-run"
    dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$T/munge/munge.key"
    export HARMONICS_MUNGE_SOCKET="$T/munge-run/munge.socket"
    munged --force --key-file="$T/munge/munge.key" --socket="$HARMONICS_MUNGE_SOCKET" \
        --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" --seed-file="$T/munge/seed" \
        || fail "munged did not start"
    wait_for test -S "$HARMONICS_MUNGE_SOCKET" || fail "no munge socket"
}

write_conf() {
    P1=$(free_port); P2=$(free_port); PC=$(free_port)
    cat > "$T/topology.conf" <<EOT
SwitchName=rack1 Nodes=n[1-4]
SwitchName=rack2 Nodes=n[5-8]
SwitchName=spine Switches=rack[1-2]
EOT
    cat > "$T/harmonics.conf" <<EOT
TopologyFile=topology.conf
NodeBandwidth=100Gbps
Oversubscription=${OVERSUBSCRIPTION:-4}
SwitchName=rack1 Schedd=127.0.0.1:$P1
SwitchName=rack2 Schedd=127.0.0.1:$P2
Epoch=${EPOCH:-200ms}
ReportInterval=100ms
CoordAddress=127.0.0.1:$PC
CoordSocket=$T/coordd.sock
StateFile=$T/leaves.state
SlurmUser=$(id -un)
MungeSocket=$HARMONICS_MUNGE_SOCKET
LogLevel=${LOGLEVEL:-debug}
PhaseGroups=${PHASE_GROUPS:-yes}
FreeOutrunning=${FREE_OUTRUNNING:-yes}
ChargeWaits=${CHARGE_WAITS:-yes}
EOT
}

start_schedd() {   # start_schedd LEAF
    "$SCHEDD" -f "$T/harmonics.conf" --leaf "$1" --log "$T/schedd-$1.log" &
    PIDS+=($!)
    eval "SCHEDD_PID_$1=$!"
}

start_coordd() {
    "$COORDD" -f "$T/harmonics.conf" --slurm no --log "$T/coordd.log" &
    COORDD_PID=$!
    PIDS+=($COORDD_PID)
    wait_for test -S "$T/coordd.sock" || fail "coordd socket missing"
}

# Two leaves (write_conf's): munged, coordd and both schedds running, the
# schedds registered with coordd.
start_two_leaves() {
    start_munged
    write_conf
    start_coordd
    start_schedd rack1
    start_schedd rack2
    WAIT_S=10 wait_for leaves_connected 2 || fail "schedds did not register with coordd"
}

# Cross-leaf jobs in the tests: 1 GB in 80 ms every 200 ms, the whole
# uplink while it lasts, so two of them collide unless shifted apart.
CROSS_PHASE=(--phase-off 0.1 --phase-dur 0.08 --phase-bytes 1e9)

# same_schedule_per_epoch JOB FILE1 FILE2: hooks output with --history.
# Every decision epoch (> 0) both saw for JOB carries the same schedule from
# both schedds, and they share at least one. An epoch is its decider's (the
# owner leaf's, or coordd's for a phase family): keyed by owner and epoch.
same_schedule_per_epoch() {
    awk -v job="job=$1" '
        $1 == "SCHED" && $2 == job {
            ep = ""; who = ""
            for (i = 3; i <= NF; i++) { if ($i ~ /^epoch=/) ep = substr($i, 7); if ($i ~ /^owner=/) who = substr($i, 7) }
            if (ep == "" || ep == 0) next
            ep = who "/" ep
            line = $0; sub(/ at=[0-9.]+$/, "", line)   # when each hook heard it differs
            if (FILENAME == ARGV[1]) seen[ep] = line
            else if (ep in seen) { common++; if (seen[ep] != line) { print "epoch " ep ": " seen[ep] " vs " line; bad = 1 } }
        }
        END { if (!common) print "no common epoch"; exit (bad || !common) }' "$2" "$3"
}

ctl() { "$CTL" -f "$T/harmonics.conf" "$@"; }

# Number of schedds coordd shows as connected.
connected_leaves() { ctl show leaves | grep -c 'Connected=yes'; }
# leaves_connected N: true when coordd shows N schedds connected.
leaves_connected() { [ "$(connected_leaves)" = "$1" ]; }

# --- Four leaves (daemons_conflict, daemons_adopt): n[1-4] under rack1 ...
# n[13-16] under rack4, coordd and a schedd per leaf running and connected.
# PORT_OF maps a leaf's first node number to its schedd's port.
start_four_leaves() {
    write_conf
    P3=$(free_port) P4=$(free_port)
    cat > "$T/topology.conf" <<EOT
SwitchName=rack1 Nodes=n[1-4]
SwitchName=rack2 Nodes=n[5-8]
SwitchName=rack3 Nodes=n[9-12]
SwitchName=rack4 Nodes=n[13-16]
SwitchName=spine Switches=rack[1-4]
EOT
    sed -i "s/^SwitchName=rack2 .*/&\nSwitchName=rack3 Schedd=127.0.0.1:$P3\nSwitchName=rack4 Schedd=127.0.0.1:$P4/" "$T/harmonics.conf"
    start_coordd
    for r in rack1 rack2 rack3 rack4; do start_schedd $r; done
    WAIT_S=10 wait_for leaves_connected 4 || fail "schedds did not register with coordd"
    declare -gA PORT_OF=([1]=$P1 [5]=$P2 [9]=$P3 [13]=$P4)
}
# The schedd port of node nN's leaf (four leaves of four nodes).
port_of() { local n=${1#n}; echo ${PORT_OF[$(( (n - 1) / 4 * 4 + 1 ))]}; }

# adopt_jobs: the jobs of daemons.adopt and daemons.measuring, in NODES and
# PHASE for run_two_node_jobs.
# Slurm says where each job runs: one node on each of its two leaves. Every
# ring fills the uplink (12.5 GB/s) while it communicates. Jobs 1-3: 25 ms
# every 100 ms; job 4: 45 ms every 50 ms. The hooks' periods measure 100.0 ms
# when rack1 plans jobs 1 and 2 (on 101 ms, with the 1 % guard) and about
# 100.2 ms when rack3 adopts job 3: its own target, 101.2 ms, would put it on
# 102 ms, drifting across 1 and 2; it must share their 101 ms (the Local
# Scheduler's newcomer rule; without it this test failed 5 runs in 5).
adopt_jobs() {
    local j
    declare -gA NODES=([1]="n1 n9" [2]="n2 n10" [3]="n5 n11" [4]="n6 n13") PHASE=()
    for j in 1 2 3; do PHASE[$j]="--period 0.1 --phase-off 0.075 --phase-dur 0.025 --phase-bytes 0.3125e9"; done
    PHASE[4]="--period 0.05 --phase-off 0.005 --phase-dur 0.045 --phase-bytes 0.5625e9"
}

# ring_hook JOB DURATION_S NODE RANK PHASE...: the hooks of rank RANK (0 or
# 1) of JOB, a ring of one rank on each of two nodes, on NODE for
# DURATION_S, with --history into $T/hJOB-a.out (rank 0) or -b.out (rank 1).
ring_hook() {
    local job=$1 dur=$2 node=$3 rank=$4 side=a
    shift 4
    [ "$rank" = 1 ] && side=b
    "$HX_CLIENT" hooks 127.0.0.1:$(port_of $node) --jobs $job --ranks 1 --rank-base $rank --node $node --nnodes 2 \
        --duration "$dur" --history "$@" > "$T/h$job-$side.out"
}

# run_two_node_jobs DURATION_S: jobs ${!NODES[@]}, each one rank on each of
# its two nodes ("nA nB" in NODES[job]) with the phase options PHASE[job],
# announced to coordd first (with the notify options NOTIFY_OPTS, if set);
# waits for every hook, whose output (with --history) is in $T/hJOB-a.out and
# $T/hJOB-b.out.
run_two_node_jobs() {
    local dur=$1 j hooks=() h
    RUN_S=$dur
    for j in $(printf "%s\n" "${!NODES[@]}" | sort -n); do
        set -- ${NODES[$j]}
        "$HX_CLIENT" notify "$T/coordd.sock" --jobs $j --job-uid 0 --nodes "$1,$2" ${NOTIFY_OPTS:-} >/dev/null ||
            fail "notify job $j"
    done
    for j in $(printf "%s\n" "${!NODES[@]}" | sort -n); do
        set -- ${NODES[$j]}
        ring_hook $j "$dur" $1 0 ${PHASE[$j]} &
        hooks+=($!)
        ring_hook $j "$dur" $2 1 ${PHASE[$j]} &
        hooks+=($!)
    done
    for h in "${hooks[@]}"; do wait $h || { cat "$T"/h*.out; fail "some hooks got no schedule"; }; done
    grep -h '^JOB' "$T"/h*-a.out
}

# late_two_node_job JOB DELAY_S DURATION_S "nA nB" PHASE...: after DELAY_S,
# JOB announced to coordd and its two hooks run as run_two_node_jobs' do
# (output in $T/hJOB-a.out and -b.out); start it in the background before
# run_two_node_jobs and `wait` for it: false when a hook got no schedule.
late_two_node_job() {
    local job=$1 delay=$2 dur=$3 nodes=($4) a rb
    shift 4
    sleep "$delay"
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs $job --job-uid 0 --nodes "${nodes[0]},${nodes[1]}" >/dev/null || return 1
    ring_hook $job "$dur" ${nodes[0]} 0 "$@" &
    a=$!
    ring_hook $job "$dur" ${nodes[1]} 1 "$@"
    rb=$?
    wait $a && [ $rb = 0 ]
}

# never_gated JOB: neither of JOB's hooks (run_two_node_jobs' a and b) got a
# gated schedule after the first second (before the first report there is
# nothing to know a job that does not hold by), and the last was free.
never_gated() {
    local h
    for h in a b; do
        awk -v job="job=$1" '$1 == "SCHED" && $2 == job && $3 == "gated=1" {
                 for (i = 4; i <= NF; i++) if ($i ~ /^at=/ && substr($i, 4) + 0 > 1) bad = 1 }
             END { exit bad }' "$T/h$1-$h.out" ||
            fail "job $1's hooks ($h) were gated: $(grep "^SCHED job=$1 " "$T/h$1-$h.out" | tail -n 3)"
        grep -q "^JOB $1 gated=0" "$T/h$1-$h.out" || fail "job $1's last schedule ($h): $(grep "^JOB $1 " "$T/h$1-$h.out")"
    done
}

# settled JOB SECONDS: JOB's schedule, as its first hook heard it (--history),
# did not change in the run's last SECONDS (run_two_node_jobs' duration in
# $RUN_S): owners that flap move it every epoch or two.
settled() {
    local last
    last=$(grep "^SCHED job=$1 " "$T/h$1-a.out" | tail -n 1 | sed -n 's/.* at=\([0-9.]*\)$/\1/p')
    [ -n "$last" ] || fail "job $1: no schedule history"
    python3 -c "import sys; sys.exit(0 if $last <= $RUN_S - $2 else 1)" ||
        fail "job $1's schedule still changed at $last s of $RUN_S s: $(grep -c "^SCHED job=$1 " "$T/h$1-a.out") changes"
}

# restart_coordd [LATE_LEAF]: coordd killed (-9) and started again, its log so
# far kept as coordd-first.log; back once the four schedds have re-registered
# and a few ticks have passed (a coordd that had forgotten a plan would plan it
# anew). LATE_LEAF's schedd is stopped meanwhile and resumed two epochs after
# the other three registered (a schedd that comes back late, as one at its
# retry backoff).
restart_coordd() {
    local late=${1:-} pid=""
    [ -n "$late" ] && { eval "pid=\$SCHEDD_PID_$late"; kill -STOP "$pid"; }
    kill -KILL "$COORDD_PID"
    wait "$COORDD_PID" 2>/dev/null
    mv "$T/coordd.log" "$T/coordd-first.log"
    start_coordd
    if [ -n "$pid" ]; then
        WAIT_S=15 wait_for leaves_connected 3 || { kill -CONT "$pid"; fail "schedds did not re-register after the restart"; }
        sleep 0.4
        kill -CONT "$pid"
    fi
    WAIT_S=15 wait_for leaves_connected 4 || fail "schedds did not re-register after the restart"
    sleep 1
}

# coordinators_job JOB: a phase family's job (member or free rider), coordd's
# on harmonicsctl and in both its hooks' last schedules; its two leaves pushed
# the same schedule in every epoch, unchanged for the run's last 3 s.
coordinators_job() {
    local j=$1 s
    ctl show job $j | grep -q 'Owner=(coordinator)' || fail "job $j is not the coordinator's: $(ctl show job $j)"
    for s in a b; do
        grep -q "^JOB $j .*owner=(coordinator)" "$T/h$j-$s.out" ||
            fail "job $j: hook $s's last schedule is not coordd's: $(grep "^JOB $j " "$T/h$j-$s.out")"
    done
    same_schedule_per_epoch $j "$T/h$j-a.out" "$T/h$j-b.out" || fail "job $j: its two leaves pushed different schedules"
    settled $j 3
}

# apart A B BURST_S: the last schedules of jobs A and B are gated, on one
# period, with shifts at least BURST_S apart modulo it.
apart() {
    local a b
    a=$(grep "^JOB $1 " "$T/h$1-a.out") b=$(grep "^JOB $2 " "$T/h$2-a.out")
    case "$a $b" in *gated=0*) fail "job $1 or $2 not gated at the end: $a / $b" ;; esac
    python3 - "$a" "$b" "$3" <<'PY' || fail "jobs $1 and $2 still collide: $a / $b"
import sys
def f(line, k): return float(line.split(k + "=")[1].split()[0])
a, b, burst = sys.argv[1], sys.argv[2], float(sys.argv[3])
p = f(a, "period")
d = abs(f(a, "shift") - f(b, "shift")) % p
sys.exit(0 if p == f(b, "period") and min(d, p - d) >= burst - 1e-6 else 1)
PY
}

# Checks after a phase-family member JOB left its family for outrunning it
# (daemons.family_outrun, daemons.family_far):
# family_member_left JOB MIN_S MAX_S HOLD_RE OTHERS...: coordd said JOB left,
# MIN_S to MAX_S after it joined; its owner ran it free for a hold matching
# HOLD_RE (seconds) and both its hooks got a free schedule after their gated
# ones; the OTHERS were never taken out and end gated in their family.
family_member_left() {
    local job=$1 min=$2 max=$3 hold=$4 j s first start
    shift 4
    grep -q "job $job leaves its phase family" "$T/coordd.log" || fail "coordd's log does not say job $job left its family"
    for j in "$@"; do
        grep -q "job $j: in its phase family" "$T/coordd.log" && fail "job $j, on its family's period, was taken out"
        grep -q "job $j leaves its phase family" "$T/coordd.log" && fail "job $j left its family"
        grep -q "^JOB $j gated=1 .*owner=(coordinator)" "$T/h$j-a.out" ||
            fail "job $j does not end in its family: $(grep "^JOB $j " "$T/h$j-a.out")"
    done
    first=$(grep -m1 "job $job: in its phase family" "$T/coordd.log" | cut -c12-23)
    start=$(grep -m1 "job $job joins a phase family" "$T/coordd.log" | cut -c12-23)
    awk -v a="$start" -v b="$first" -v lo="$min" -v hi="$max" \
        'function s(t, p) { split(t, p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }
         BEGIN { d = s(b) - s(a); if (d < lo || d > hi) { print "taken out " d " s after joining"; exit 1 } }' ||
        fail "job $job left at the wrong time (joined $start, out $first)"
    grep -Eq "job $job: runs free for $hold s more: gated, it kept iterating past its period" "$T"/schedd-rack*.log ||
        fail "job $job's owner did not learn the hold: $(grep -h "job $job" "$T"/schedd-rack*.log | tail -n 3)"
    for s in a b; do
        grep "^SCHED job=$job " "$T/h$job-$s.out" | awk '$3 == "gated=1" { g = 1 } g && $3 == "gated=0" { ok = 1 } END { exit !ok }' ||
            fail "job $job's hooks ($s) never ran free after their gate: $(grep "^SCHED job=$job " "$T/h$job-$s.out" | tail -n 4)"
    done
}

# family_with_slow_member PERIOD PHASE_DUR RUN_S: the four cross-leaf 0.2 s
# rings of daemons.groups form a phase family on four leaves; after 4 s job
# 4's hooks report PERIOD s iterations, its collective stretched from 60 ms
# to PHASE_DUR s by collisions the plan does not see; RUN_S s in all.
family_with_slow_member() {
    local j
    start_munged
    start_four_leaves
    declare -gA NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14") PHASE
    for j in 1 2 3; do PHASE[$j]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9"; done
    PHASE[4]="--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9 --later-period $1 --later-phase-dur $2 --after 4"
    run_two_node_jobs "$3"
    for j in 1 2 3 4; do
        grep -q "job $j joins a phase family" "$T/coordd.log" || fail "job $j never joined a phase family"
    done
}

# outran_family JOB NET_RE FOR_S HOLD_S: coordd logged that JOB, at a family
# period of 0.20x s, iterated at NET_RE s (a regular expression) and left
# after FOR_S s of that for a hold of HOLD_S s.
outran_family() {
    grep -Eq "job $1: in its phase family at period 0\\.2[01][0-9]* s it iterated at $2[0-9]* s \\(net of the gate.s holds\\) for $3 s: it misses its slots; out of families and free for $4 s" \
        "$T/coordd.log" || fail "coordd did not take job $1 out of its family after $3 s for $4 s: $(grep -h "job $1" "$T/coordd.log")"
}
