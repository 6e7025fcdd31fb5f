# Functions of contrib/demo/run (sourced; the caller sets SRC, BUILD, WORK,
# PORT, SCALE, ITER_F, WORKLOAD, NODES, RACKS, RUN_TIMEOUT, AGREE; MEASURING and
# OVERSUB are optional: no measuring jobs, one NIC's worth of uplink per leaf).
# Everything here is bounded in time and owns only the processes it started.

SIM=$BUILD/src/sim/harmonics-sim
FABRIC=$BUILD/contrib/emulator/harmonics-fabric
TRAINER=$BUILD/contrib/emulator/harmonics-trainer
PLUGIN=$BUILD/src/plugins/nccl/.libs/libnccl-profiler-harmonics.so
SCHEDD=${DEMO_SCHEDD:-$BUILD/src/sched/harmonics-schedd}  # DEMO_SCHEDD: try another build of the daemon
# DEMO_SCHEDD_FLAGS: extra options for every schedd (e.g. -v: log each epoch's plans)
COORDD=$BUILD/src/coord/harmonics-coordd
HCTL=$BUILD/src/coord/harmonicsctl
JOB_SUBMIT_SO=$BUILD/src/plugins/job_submit/harmonics/.libs/job_submit_harmonics.so
PREP_SO=$BUILD/src/plugins/prep/harmonics/.libs/prep_harmonics.so
MC=$SRC/contrib/minicluster
CLUSTER=$WORK/cluster
ETC=$WORK/etc
RESULTS=$WORK/results
FABRIC_PORT=$((PORT + 12)) SCHEDD_PORT=$((PORT + 13)) COORD_PORT=$((PORT + 15))
FABRIC_PID="" COORDD_PID="" SCHEDD_PIDS=() JOB_IDS=()

say() { printf '[emulation] %s\n' "$*" >&2; }
die() { printf '\n[emulation] demo failed: %s\n' "$*" >&2; exit 1; }

need_tools() {
  local f
  for f in "$SIM" "$FABRIC" "$TRAINER" "$PLUGIN" "$SCHEDD" "$COORDD" "$HCTL" "$JOB_SUBMIT_SO"; do
    [ -e "$f" ] || die "$f is not built (make -C $BUILD)"
  done
  for f in munged slurmctld slurmd sbatch srun squeue scontrol awk; do
    command -v "$f" >/dev/null || die "$f not found (contrib/quickstart installs it)"
  done
  [ -f "$PREP_SO" ] || say "prep/harmonics not built: coordd learns jobs from Slurm's job list only"
}

# Stop a process this script started: TERM, up to 5 s, then KILL.
stop_pid() {
  local pid=$1 end=$((SECONDS + 5))
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

stop_daemons() {
  local p
  for p in "${SCHEDD_PIDS[@]}"; do stop_pid "$p"; done
  SCHEDD_PIDS=()
  stop_pid "$COORDD_PID"
  COORDD_PID=""
}

teardown() {
  local rc=$?
  trap - EXIT INT TERM
  if [ ${#JOB_IDS[@]} -gt 0 ] && [ -n "${SLURM_CONF:-}" ]; then scancel "${JOB_IDS[@]}" >/dev/null 2>&1; fi
  stop_daemons
  stop_pid "$FABRIC_PID"
  "$MC/down" "$CLUSTER" >/dev/null 2>&1
  [ $rc -eq 0 ] || say "logs are in $WORK/log and $CLUSTER/log"
  exit $rc
}

# poll SECONDS WHAT COMMAND...: every 0.2 s until COMMAND succeeds.
poll() {
  local limit=$1 what=$2 end
  shift 2
  end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || die "timed out after ${limit}s waiting for $what"
    sleep 0.2
  done
}

# Two harmonics.conf files describe one fabric. model.conf is in model time
# (the fabric and harmonics-sim read it); testbed.conf is what the daemons
# and hooks see in wall-clock time: X times slower, so every bandwidth is
# divided by X and every duration multiplied by X.
# Guard is harmonics.conf's default (1%) unless DEMO_GUARD sets it: the
# release rule keeps a ring that a busy host wakes late from cascading into
# the next one's slot (doc/testbed.md, "Guard").
write_confs() {
  local nic_bps=12.5e9 epoch_s=0.1 slot_s=0.001 horizon_s=1 guard=${DEMO_GUARD:-}
  mkdir -p "$ETC"
  cat > "$ETC/model.conf" <<CONF
# EMULATED fabric, model time (harmonics-fabric --time-scale $SCALE, harmonics-sim)
TopologyFile=$CLUSTER/etc/topology.conf
NodeBandwidth=100Gbps
Oversubscription=${OVERSUB:-$((NODES / RACKS))}
Epoch=$(awk "BEGIN{print $epoch_s * 1000}")ms
Slot=$(awk "BEGIN{print $slot_s * 1000}")ms
DriftHorizon=$(awk "BEGIN{print $horizon_s * 1000}")ms
${guard:+Guard=$guard}
CONF
  {
    echo "# EMULATED testbed in wall-clock time (time scale x$SCALE): bandwidths / $SCALE, durations x $SCALE"
    echo "TopologyFile=$CLUSTER/etc/topology.conf"
    echo "NodeBandwidth=$(awk "BEGIN{printf \"%.0f\", $nic_bps / $SCALE}")"
    echo "Oversubscription=${OVERSUB:-$((NODES / RACKS))}"
    echo "Epoch=$(awk "BEGIN{print $epoch_s * $SCALE * 1000}")ms"
    echo "Slot=$(awk "BEGIN{print $slot_s * $SCALE * 1000}")ms"
    echo "DriftHorizon=$(awk "BEGIN{print $horizon_s * $SCALE * 1000}")ms"
    [ -z "$guard" ] || echo "Guard=$guard"
    local r
    for r in $(seq 1 "$RACKS"); do echo "SwitchName=rack$r Schedd=127.0.0.1:$((SCHEDD_PORT + r - 1))"; done
    echo "CoordAddress=127.0.0.1:$COORD_PORT"
    echo "CoordSocket=$CLUSTER/run/coordd.sock"
    echo "StateFile=$CLUSTER/run/leaves.state"
    echo "MungeSocket=$CLUSTER/run/munge.socket"
    echo "SlurmUser=root"
    echo "AdminCommentInterval=1s"
    echo "ReportInterval=500ms"
  } > "$ETC/testbed.conf"
}

setup_cluster() {
  [ "$RACKS" -le 2 ] || die "the demo's ports allow at most 2 leaves"
  "$MC/down" "$CLUSTER" --remove >/dev/null 2>&1
  rm -rf "$RESULTS" "$WORK/log" "$WORK/runs"
  mkdir -p "$RESULTS" "$WORK/log" "$WORK/runs"
  write_confs
  local args=(--nodes "$NODES" --racks "$RACKS" --port-base "$PORT" --harmonics-conf "$ETC/testbed.conf"
              --plugin-dir "$(dirname "$JOB_SUBMIT_SO")" --conf-line "JobSubmitPlugins=harmonics")
  if [ -f "$PREP_SO" ]; then
    args+=(--plugin-dir "$(dirname "$PREP_SO")" --conf-line "PrEpPlugins=script,harmonics")
  fi
  say "starting the mini Slurm cluster: $NODES nodes in $RACKS leaves on 127.0.0.1 (ports $PORT-$((PORT + 15)))"
  "$MC/up" "$CLUSTER" "${args[@]}" > "$WORK/log/minicluster.log" 2>&1 || die "minicluster up failed (see $WORK/log/minicluster.log)"
  . "$CLUSTER/env"
}

start_fabric() {
  "$FABRIC" --config "$ETC/model.conf" --port "$FABRIC_PORT" --time-scale "$SCALE" > "$WORK/log/fabric.log" 2>&1 &
  FABRIC_PID=$!
  poll 10 "harmonics-fabric" grep -q "EMULATED fabric" "$WORK/log/fabric.log"
}

start_schedd() {  # start_schedd R: the schedd of leaf rackR (SCHEDD_PIDS[R-1])
  "$SCHEDD" -f "$ETC/testbed.conf" --leaf "rack$1" --log "$WORK/log/schedd-rack$1.log" ${DEMO_SCHEDD_FLAGS:-} \
    >> "$WORK/log/schedd-rack$1.log" 2>&1 &
  SCHEDD_PIDS[$(($1 - 1))]=$!
}

start_coordd() {
  HARMONICS_CONF=$ETC/testbed.conf "$COORDD" -f "$ETC/testbed.conf" --slurm-conf "$SLURM_CONF" \
    --log "$WORK/log/coordd.log" >> "$WORK/log/coordd.log" 2>&1 &
  COORDD_PID=$!
  poll 15 "coordd answering" "$HCTL" -f "$ETC/testbed.conf" ping
}

start_harmonics() {
  start_coordd
  local r
  for r in $(seq 1 "$RACKS"); do start_schedd "$r"; done
  leaves_up() { [ "$("$HCTL" -f "$ETC/testbed.conf" show leaves | grep -c 'Connected=yes')" -eq "$RACKS" ]; }
  poll 15 "$RACKS schedds connected to coordd" leaves_up
}

# Workload lines without comments: id,arrival,model,nodes,gpus,iterations,placement
workload_lines() { grep -v '^[[:space:]]*#' "$WORKLOAD" | grep -v '^[[:space:]]*$' | grep '^[0-9]'; }
field() { printf '%s\n' "$1" | awk -F, -v n="$2" '{ s = ""; for (i = n; i <= NF; ++i) s = s (i > n ? "," : "") $i; if (n < 7) s = $n; gsub(/^[ "]+|[ "]+$/, "", s); print s }'; }
scaled_iterations() { awk -v n="$1" -v f="$ITER_F" 'BEGIN{ v = int(n * f + 0.5); print (v < 8 ? 8 : v) }'; }

# measuring_job ID: whether --measuring names workload job ID.
measuring_job() { [[ ",${MEASURING:-}," == *",$1,"* ]]; }

submit_jobs() {  # submit_jobs RUNDIR [off|on]: one unchanged sbatch line per workload job
  local run=$1 mode=${2:-on} line id model nodes gpus iters place jid gate
  : > "$run/jobs.txt"
  while IFS= read -r line; do
    id=$(field "$line" 1) model=$(field "$line" 3) nodes=$(field "$line" 4) gpus=$(field "$line" 5)
    iters=$(scaled_iterations "$(field "$line" 6)") place=$(field "$line" 7) gate=()
    [ "$mode" = off ] || ! measuring_job "$id" || gate=(--export=ALL,HARMONICS_GATE=off)
    jid=$(sbatch --parsable "${gate[@]}" -J "$model" -N "$nodes" --ntasks-per-node=1 ${place:+-w "$place"} \
            --chdir="$run" --output="$run/slurm-%j.out" \
            --wrap "srun $TRAINER --model $model --iterations $iters --time-scale $SCALE --gpus-per-node $gpus --fabric 127.0.0.1:$FABRIC_PORT --out $run/%j-rank%r.csv" \
          | cut -d';' -f1) || die "sbatch failed for job $id"
    JOB_IDS+=("$jid")
    printf '%s %s %s %s %s %s %s\n' "$id" "$jid" "$model" "$nodes" "$gpus" "$iters" "$place" >> "$run/jobs.txt"
  done < <(workload_lines)
}

iterations_done() {  # iterations_done RUNDIR: rows in the rank-0 CSVs
  local run=$1 n=0 f
  for f in "$run"/*-rank0.csv; do [ -s "$f" ] && n=$((n + $(wc -l < "$f") - 1)); done
  echo "$n"
}
jobs_left() {
  local ids
  ids=$(IFS=,; echo "$*")
  squeue -h -j "$ids" -t PD,R,CG,CF -o %i 2>/dev/null | grep -c .
}

# What Harmonics shows while the jobs run: AdminComment and the schedule.
snapshot() {
  local run=$1 jid
  for jid in $(awk '{print $2}' "$run/jobs.txt" | head -3); do
    scontrol show job "$jid" | grep -E '^ *(JobId|AdminComment)=' | tr -s ' ' | sed 's/^ //'
  done > "$run/scontrol.txt" 2>&1
  "$HCTL" -f "$ETC/testbed.conf" show schedule > "$run/schedule.txt" 2>&1
}

# What an admin sets cluster-wide for the jobs; users' sbatch lines stay the same.
job_env() {  # job_env off|on
  if [ "$1" = on ]; then export HARMONICS_GATE=host; else export HARMONICS_GATE=off; fi
  export NCCL_PROFILER_PLUGIN=$PLUGIN HARMONICS_CONF=$ETC/testbed.conf
  export HARMONICS_MUNGE_SOCKET=$CLUSTER/run/munge.socket HARMONICS_REPORT_MS=$((50 * SCALE))
}

run_mode() {  # run_mode off|on
  local mode=$1 run=$WORK/runs/$1 total start next_line left done_ snapped=no tty=no
  mkdir -p "$run"
  [ -t 2 ] && tty=yes
  if [ "$mode" = on ]; then
    say "Harmonics on: starting harmonics-coordd and a harmonics-schedd per leaf"
    start_harmonics
  else
    say "Harmonics off: fair sharing (no schedd, no coordd; the NCCL plugin only measures)"
  fi
  job_env "$mode"
  JOB_IDS=()
  submit_jobs "$run" "$mode"
  total=$(awk '{s += $6} END {print s}' "$run/jobs.txt")
  start=$SECONDS next_line=$SECONDS
  while :; do
    left=$(jobs_left "${JOB_IDS[@]}")
    done_=$(iterations_done "$run")
    if [ $tty = yes ]; then
      printf '\r[emulation x%s] Harmonics %-3s: %4d/%d iterations, %d jobs running, %3d s ' "$SCALE" "$mode" "$done_" "$total" "$left" $((SECONDS - start)) >&2
    elif [ $SECONDS -ge "$next_line" ]; then
      say "Harmonics $mode: $done_/$total iterations, $left jobs running, $((SECONDS - start)) s"
      next_line=$((SECONDS + 15))
    fi
    if [ "$mode" = on ] && [ $snapped = no ] && [ "$done_" -ge $((total / 2)) ]; then snapshot "$run"; snapped=yes; fi
    [ "$left" -gt 0 ] || break
    [ $((SECONDS - start)) -lt "$RUN_TIMEOUT" ] || { [ $tty = no ] || echo >&2; die "run '$mode' still had $left jobs after ${RUN_TIMEOUT}s"; }
    sleep 1
  done
  [ $tty = no ] || echo >&2
  JOB_IDS=()
  local bad
  bad=$(awk '{print $2}' "$run/jobs.txt" | while read -r j; do [ -s "$run/$j-rank0.csv" ] || echo "$j"; done)
  [ -z "$bad" ] || die "jobs without results in run '$mode': $bad (see $run/slurm-*.out)"
  unset HARMONICS_GATE
  [ "$mode" = off ] || stop_daemons
  analyse_run "$run"
}

# Per job, from rank 0's CSV, in model milliseconds: mean iteration and
# communication time over the steady state (the first quarter of each job's
# iterations is warm-up: the hook learns the rhythm before it can be gated).
# Also the sim workload: the same jobs and placement, arriving when the
# emulated jobs really started; the simulator's steady-state means
# (jobs.csv's steady_* columns) leave out the same first quarter.
analyse_run() {
  local run=$1 first
  first=$(awk -F, 'FNR == 2 { if (t == "" || $2 < t) t = $2 } END { print t }' "$run"/*-rank*.csv)
  : > "$run/emulated.txt"
  echo "id,arrival_s,model,nodes,gpus_per_node,iterations,placement" > "$run/sim-workload.csv"
  while read -r id jid model nodes gpus iters place; do
    awk -F, -v id="$id" -v x="$SCALE" '
      NR == 1 { next }
      { rows[++n] = $0 }
      END {
        skip = int(n / 4)
        for (i = skip + 1; i <= n; ++i) { split(rows[i], f, ","); it += f[5] - f[2]; cm += f[4] - f[3]; ++k }
        printf "%s %.3f %.3f %d\n", id, it / k / x / 1e6, cm / k / x / 1e6, n
      }' "$run/$jid-rank0.csv" >> "$run/emulated.txt"
    # The job arrives, for the simulator, when its last rank started: its
    # ring's first all-reduce waits for every rank's first compute phase.
    local arr
    arr=$(awk -F, -v x="$SCALE" -v t0="$first" 'FNR == 2 && $2 > t { t = $2 }
      END { printf "%.6f", (t - t0) / x / 1e9 }' "$run/$jid"-rank*.csv)
    echo "$id,$arr,$model,$nodes,$gpus,$iters,\"$place\"" >> "$run/sim-workload.csv"
  done < "$run/jobs.txt"
  local policy=(--policy fair)
  [ "$(basename "$run")" = on ] && policy=(--policy harmonics ${MEASURING:+--measuring-jobs "$MEASURING"})
  "$SIM" --topology "$CLUSTER/etc/topology.conf" --config "$ETC/model.conf" --workload "$run/sim-workload.csv" \
    "${policy[@]}" --csv "$run/sim.csv" --quiet > "$run/sim.log" 2>&1 || die "harmonics-sim failed (see $run/sim.log)"
}

# The side-by-side table: emulated off/on, simulator fair/harmonics, changes.
report() {
  local off=$WORK/runs/off on=$WORK/runs/on
  awk -v agree="$AGREE" -v x="$SCALE" '
    FILENAME ~ /off\/emulated/ { oit[$1] = $2; ocm[$1] = $3; ids[++n] = $1; next }
    FILENAME ~ /on\/emulated/ { nit[$1] = $2; ncm[$1] = $3; next }
    FILENAME ~ /off\/jobs/ { model[$1] = $3; place[$1] = $7; next }
    FILENAME ~ /off\/sim.csv/ && FNR > 1 { split($0, f, ","); sit_off[f[2]] = f[16]; scm_off[f[2]] = f[17]; next }
    FILENAME ~ /on\/sim.csv/ && FNR > 1 { split($0, f, ","); sit_on[f[2]] = f[16]; scm_on[f[2]] = f[17]; next }
    function pct(a, b) { return b > 0 ? 100 * (a - b) / b : 0 }
    END {
      printf "\nEMULATED testbed (real Slurm and Harmonics; emulated GPUs and fabric), time scale x%s.\n", x
      printf "All times in model milliseconds per iteration (wall time / %s), steady state (first quarter of iterations left out, emulated and simulated).\n\n", x
      printf "%-4s %-11s %-9s | %-26s | %-26s | %-31s\n", "job", "model", "nodes", "iteration: off    on   chg", \
        "comm: off      on    chg", "sim iteration: fair harm  d_off d_on"
      maxd = 0
      for (i = 1; i <= n; ++i) {
        j = ids[i]
        d1 = pct(oit[j], sit_off[j]); d2 = pct(nit[j], sit_on[j])
        a1 = d1 < 0 ? -d1 : d1; a2 = d2 < 0 ? -d2 : d2
        if (a1 > maxd) maxd = a1
        if (a2 > maxd) maxd = a2
        printf "%-4s %-11s %-9s | %7.1f %7.1f %+6.1f%%   | %7.1f %7.1f %+6.1f%%   | %7.1f %7.1f %+5.1f%% %+5.1f%%\n", \
          j, model[j], place[j], oit[j], nit[j], pct(nit[j], oit[j]), ocm[j], ncm[j], pct(ncm[j], ocm[j]), \
          sit_off[j], sit_on[j], d1, d2
        so += oit[j]; sn += nit[j]; co += ocm[j]; cn += ncm[j]; fo += sit_off[j]; fn += sit_on[j]; go += scm_off[j]; gn += scm_on[j]
      }
      printf "%-26s | %7.1f %7.1f %+6.1f%%   | %7.1f %7.1f %+6.1f%%   | %7.1f %7.1f\n", "mean", so / n, sn / n, \
        pct(sn, so), co / n, cn / n, pct(cn, co), fo / n, fn / n
      printf "\nHarmonics on vs off (emulated): mean iteration time %+.1f%% (target <= -15%%), mean communication time %+.1f%% (target <= -30%%)\n", \
        pct(sn, so), pct(cn, co)
      printf "harmonics-sim predicts for the same jobs, placement and start times: mean iteration time %+.1f%%, mean communication time %+.1f%%\n", \
        pct(fn, fo), pct(gn, go)
      printf "largest emulated-vs-simulated difference in a job'"'"'s mean iteration time: %.1f%% (bound %s%%)\n", maxd, agree
      printf "summary it_off=%.3f it_on=%.3f comm_off=%.3f comm_on=%.3f max_sim_diff=%.3f\n", so / n, sn / n, co / n, cn / n, maxd > "/dev/stderr"
    }' "$off/emulated.txt" "$on/emulated.txt" "$off/jobs.txt" "$off/sim.csv" "$on/sim.csv" \
    > "$RESULTS/table.txt" 2> "$RESULTS/summary.txt"
  cat "$RESULTS/table.txt"
  echo
  echo "scontrol show job (Harmonics on, mid-run; AdminComment written by harmonics-coordd):"
  sed 's/^/  /' "$on/scontrol.txt" 2>/dev/null
  echo "harmonicsctl show schedule (Harmonics on, mid-run; wall-clock times, x$SCALE):"
  sed 's/^/  /' "$on/schedule.txt" 2>/dev/null
  cp "$off/sim-workload.csv" "$RESULTS/sim-workload-off.csv"
  cp "$on/sim-workload.csv" "$RESULTS/sim-workload-on.csv"
  echo "same scenario in the simulator: $SIM --topology $CLUSTER/etc/topology.conf --config $ETC/model.conf --workload $RESULTS/sim-workload-off.csv --policy fair,harmonics"
}

# Communication phases of every job over a window of the steady state, off
# above and on below, in model seconds.
plot_timelines() {
  command -v gnuplot >/dev/null || { say "gnuplot not found: no plot"; return 0; }
  local mode run
  for mode in off on; do
    run=$WORK/runs/$mode
    : > "$run/timeline.dat"
    while read -r id jid model _; do
      awk -F, -v y="$id" -v x="$SCALE" 'NR > 1 { printf "%d %.6f %.6f\n", y, $3 / x / 1e9, $4 / x / 1e9 }' \
        "$run/$jid-rank0.csv" >> "$run/timeline.dat"
    done < "$run/jobs.txt"
    # Rebase to the run's first collective and keep 1.5 model seconds from a third in.
    awk '{ if (t == "" || $2 < t) t = $2; if ($3 > e) e = $3; r[NR] = $0 }
         END { w0 = t + (e - t) / 3; for (i = 1; i <= NR; ++i) { split(r[i], f, " ");
               if (f[2] >= w0 && f[2] <= w0 + 1.5) printf "%d %.6f %.6f\n", f[1], f[2] - w0, f[3] - w0 } }' \
      "$run/timeline.dat" > "$run/window.dat"
  done
  gnuplot > "$WORK/log/gnuplot.log" 2>&1 <<PLOT || say "gnuplot failed (see $WORK/log/gnuplot.log)"
set terminal pngcairo size 1100,650 font ",10"
set output "$RESULTS/timelines.png"
set multiplot layout 2,1 title "EMULATED testbed: communication phases per job (model time; time scale x$SCALE)"
set xlabel "model time (s)"
set ylabel "job"
set yrange [0.3:*]
set ytics 1
set xrange [0:1.5]
set title "Harmonics off (fair sharing)"
plot "$WORK/runs/off/window.dat" using 2:1:(\$3-\$2):(0):1 with vectors nohead lw 8 lc variable notitle
set title "Harmonics on (schedds + coordd + host gate)"
plot "$WORK/runs/on/window.dat" using 2:1:(\$3-\$2):(0):1 with vectors nohead lw 8 lc variable notitle
unset multiplot
PLOT
  [ -f "$RESULTS/timelines.png" ] && echo "communication timelines (EMULATION): $RESULTS/timelines.png"
}

check_results() {
  awk -v agree="$AGREE" '
    /^summary/ { for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END {
      ok = 1
      if (!(v["it_on"] < v["it_off"])) { print "CHECK FAILED: mean iteration time not lower with Harmonics"; ok = 0 }
      if (!(v["comm_on"] < v["comm_off"])) { print "CHECK FAILED: mean communication time not lower with Harmonics"; ok = 0 }
      if (!(v["max_sim_diff"] <= agree)) { printf "CHECK FAILED: emulation and simulator differ by %.1f%% (> %s%%)\n", v["max_sim_diff"], agree; ok = 0 }
      if (ok) print "CHECK passed"
      exit ok ? 0 : 1
    }' "$RESULTS/summary.txt"
}
