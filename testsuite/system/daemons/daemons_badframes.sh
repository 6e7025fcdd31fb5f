#!/bin/bash
# Garbage, truncated, oversized and wrong-version frames close that
# connection and are counted; the daemons keep serving. A peer that never
# says hello is dropped after the hello timeout. Also SIGHUP with a
# broken config keeps the old one, and SIGTERM shuts down cleanly.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
start_munged
write_conf
start_coordd
start_schedd rack1
WAIT_S=10 wait_for leaves_connected 1 || fail "schedd did not register"

"$HX_CLIENT" badframes 127.0.0.1:$P1 || fail "schedd kept a bad connection open"
"$HX_CLIENT" badframes 127.0.0.1:$PC --role ctl || fail "coordd kept a bad TCP connection open"
"$HX_CLIENT" badframes "$T/coordd.sock" --role ctl || fail "coordd kept a bad Unix connection open"
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 500 --node n1 --duration 5 --until-scheduled || fail "schedd stopped serving"
ctl ping | grep -q Status=up || fail "coordd stopped serving"
kill -USR1 "$SCHEDD_PID_rack1"
wait_for grep -q 'stats: .*bad_frames=[4-9]' "$T/schedd-rack1.log" || fail "bad frames not counted"
grep -c 'closing the connection' "$T/coordd.log" | grep -q '^[5-9]\|^1[0-9]' || fail "coordd did not log its bad frames"

# A peer that connects and never says hello is dropped after the hello
# timeout (10 s: wire/event_conn.h kHelloTimeout_s), not kept for ever; the
# schedd serves others meanwhile.
exec 3<>"/dev/tcp/127.0.0.1/$P1" || fail "cannot connect to the schedd"
t0=$(date +%s%N)
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 502 --node n1 --duration 5 --until-scheduled || fail "not serving beside a silent peer"
timeout 20 cat <&3 >/dev/null
rc=$?
t1=$(date +%s%N)
exec 3<&-
[ $rc = 124 ] && fail "a peer without hello was still connected after 20 s"
held_ms=$(( (t1 - t0) / 1000000 ))
[ $held_ms -ge 9000 ] && [ $held_ms -le 15000 ] || fail "silent peer dropped after $held_ms ms, expected about 10 s"
echo "silent peer dropped after $held_ms ms"

# SIGHUP with a broken config: keep the old one, say why (file, line, key).
cp "$T/harmonics.conf" "$T/good.conf"
echo "Epoch=fast" >> "$T/harmonics.conf"
kill -HUP "$SCHEDD_PID_rack1"
wait_for grep -q 'SIGHUP: keeping the old configuration: .*harmonics.conf:[0-9]*.*Epoch' "$T/schedd-rack1.log" \
    || fail "bad reload not refused with file/line/key"
cp "$T/good.conf" "$T/harmonics.conf"
sed -i 's/^Epoch=.*/Epoch=300ms/' "$T/harmonics.conf"
kill -HUP "$SCHEDD_PID_rack1"
wait_for grep -q 'SIGHUP: configuration reloaded.*epoch 0.300' "$T/schedd-rack1.log" || fail "good reload not applied"
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 501 --node n1 --duration 5 --until-scheduled || fail "not serving after reload"

kill -TERM "$SCHEDD_PID_rack1"
wait "$SCHEDD_PID_rack1"; rc=$?
[ $rc = 0 ] || fail "schedd exit status $rc after SIGTERM"
grep -q 'shutting down' "$T/schedd-rack1.log" || fail "no clean shutdown"
echo PASS
