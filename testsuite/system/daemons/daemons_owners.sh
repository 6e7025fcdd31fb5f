#!/bin/bash
# A cross-leaf job coordd learns about from the schedds alone (Slurm has not
# told it the nodes yet), first from one leaf and a moment later from the
# other, gets an owner as soon as it crosses two leaves. On the emulated
# testbed such a job had none for a minute (owners were assigned only when
# the job table grew), and coordd's phase-family plan, counting "no owner" as
# an owner of its own, put it in a family beside a ring its owner planned
# alone: both ran on a period 5.7 % past BERT-base's, and Harmonics lost to
# fair sharing (doc/testbed.md, "Stop 35"). Here jobs 1 and 2 cross rack1 and
# rack2 with the same rhythm; Slurm names job 1's nodes, job 2's second leaf
# reports 1.5 s after its first. One owner must plan both (no family), and
# gate them apart.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_two_leaves

# 60 ms at the whole uplink (12.5 GB/s) every 200 ms, one rank per node.
PHASE=(--period 0.2 --phase-off 0.14 --phase-dur 0.06 --phase-bytes 0.75e9)
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 1 --job-uid 0 --nodes "n1,n5" >/dev/null || fail "notify job 1"
hook() {   # hook JOB NODE RANK_BASE PORT DURATION OUT
    "$HX_CLIENT" hooks 127.0.0.1:$4 --jobs $1 --ranks 1 --rank-base $3 --node $2 --nnodes 2 --duration $5 --history \
        "${PHASE[@]}" > "$6"
}
hook 1 n1 0 $P1 8 "$T/h1-a.out" & H1=$!
hook 1 n5 1 $P2 8 "$T/h1-b.out" & H2=$!
hook 2 n2 0 $P1 8 "$T/h2-a.out" & H3=$!
sleep 1.5
hook 2 n6 1 $P2 6.5 "$T/h2-b.out" & H4=$!
for h in $H1 $H2 $H3 $H4; do wait $h || { cat "$T"/h*.out; fail "some hooks got no schedule"; }; done
grep -h '^JOB' "$T"/h*-a.out

grep -h 'spans 2 leaves' "$T/coordd.log"
o1=$(sed -n 's/.*job 1 spans 2 leaves; owner \([a-z0-9]*\).*/\1/p' "$T/coordd.log" | head -n 1)
o2=$(sed -n 's/.*job 2 spans 2 leaves; owner \([a-z0-9]*\).*/\1/p' "$T/coordd.log" | head -n 1)
[ -n "$o1" ] && [ "$o1" = "$o2" ] || fail "jobs 1 and 2 not owned by one leaf: '$o1' and '$o2'"
if grep -h 'joins a phase family' "$T/coordd.log"; then fail "coordd put jobs of one owner in a phase family"; fi
apart 1 2 0.06
echo PASS
