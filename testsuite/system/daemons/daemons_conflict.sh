#!/bin/bash
# Four leaves and four cross-leaf jobs, as the golden scenario
# cross-leaf-conflict: jobs 1 and 3 are owned by rack1, 2 and 4 by rack2, and
# each owner packs its two jobs apart with the same shifts, so 1 and 2 collide
# on rack3 and 3 and 4 on rack4, leaves that own neither. Those leaves report
# how much of the jobs' slack the collisions take; coordd hands one job of
# each pair to the leaf where it collides, which shifts it apart from the other.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
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

# Slurm says where each job runs: one node on each of its two leaves.
declare -A NODES=([1]="n1 n9" [2]="n5 n10" [3]="n2 n13" [4]="n6 n14")
declare -A PORT_OF=([1]=$P1 [5]=$P2 [9]=$P3 [13]=$P4)
for j in 1 2 3 4; do
    set -- ${NODES[$j]}
    "$HX_CLIENT" notify "$T/coordd.sock" --jobs $j --job-uid 0 --nodes "$1,$2" >/dev/null || fail "notify job $j"
done

# 60 ms of communication every 200 ms at the whole uplink (30 % of the period,
# as the golden scenario), one rank per node.
PHASE=(--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9)
port_of() { local n=${1#n}; echo ${PORT_OF[$(( (n - 1) / 4 * 4 + 1 ))]}; }
HOOKS=()
for j in 1 2 3 4; do
    set -- ${NODES[$j]}
    "$HX_CLIENT" hooks 127.0.0.1:$(port_of $1) --jobs $j --ranks 1 --node $1 --nnodes 2 --duration 8 --history \
        "${PHASE[@]}" > "$T/h$j-a.out" &
    HOOKS+=($!)
    "$HX_CLIENT" hooks 127.0.0.1:$(port_of $2) --jobs $j --ranks 1 --rank-base 1 --node $2 --nnodes 2 --duration 8 \
        --history "${PHASE[@]}" > "$T/h$j-b.out" &
    HOOKS+=($!)
done
for h in "${HOOKS[@]}"; do wait $h || { cat "$T"/h*.out; fail "some hooks got no schedule"; }; done
grep -h '^JOB' "$T"/h*-a.out

grep -q 'owns it now' "$T/coordd.log" || fail "coordd never handed a colliding job to the leaf where it collides"
grep -h 'owns it now' "$T/coordd.log"
# Final schedules: every job gated, and each pair that shares a leaf nobody
# owned at first is apart by at least its 60 ms burst (modulo the period).
apart() {   # apart JOB_A JOB_B
    local a b
    a=$(grep "^JOB $1 " "$T/h$1-a.out") b=$(grep "^JOB $2 " "$T/h$2-a.out")
    case "$a $b" in *gated=0*) fail "job $1 or $2 not gated at the end: $a / $b" ;; esac
    python3 - "$a" "$b" <<'PY' || fail "jobs $1 and $2 still collide: $a / $b"
import sys
def f(line, k): return float(line.split(k + "=")[1].split()[0])
a, b = sys.argv[1], sys.argv[2]
p = f(a, "period")
d = abs(f(a, "shift") - f(b, "shift")) % p
sys.exit(0 if p == f(b, "period") and min(d, p - d) >= 0.06 - 1e-6 else 1)
PY
}
apart 1 2
apart 3 4
echo PASS
