#!/bin/bash
# MUNGE on every connection: forged credentials, hooks reporting for another
# user's job, and non-root/SlurmUser schedds or notifiers are refused and
# logged with peer and reason; the rightful owner is served.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to act as other uids"; exit 77; }
start_munged
write_conf
start_coordd
start_schedd rack1
WAIT_S=10 wait_for leaves_connected 1 || fail "schedd did not register"
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 400 --job-uid 1000 --nodes 'n1' >/dev/null || fail notify
wait_for grep -q 'job 400' "$T/coordd.log" || fail "coordd did not take job 400"
sleep 0.5

out=$("$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 400 --node n1 --duration 3 --as-uid 65534)
echo "$out" | grep -q 'REFUSED.*belongs to uid 1000' || fail "uid 65534 reported for uid 1000's job: $out"
grep -q 'refused hook 127.0.0.1:[0-9]* (uid 65534.*belongs to uid 1000' "$T/schedd-rack1.log" \
    || fail "refusal not logged with peer and reason"
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 400 --node n1 --duration 5 --as-uid 1000 --until-scheduled \
    || fail "the job's owner was not served"

out=$("$HX_CLIENT" badcred 127.0.0.1:$P1) || fail "forged credential accepted: $out"
echo "$out" | grep -qi 'munge decode' || fail "forged credential refused for the wrong reason: $out"
# A genuine credential made for another MUNGE service is no Hello.
out=$("$HX_CLIENT" badpayload 127.0.0.1:$PC) || fail "credential with another payload accepted: $out"
echo "$out" | grep -q 'REFUSED.*payload must be "harmonics-hello"' || fail "other payload refused for the wrong reason: $out"

# A user claims a job coordd has not told the schedd about; coordd's word evicts it.
"$HX_CLIENT" hooks 127.0.0.1:$P1 --jobs 401 --node n1 --duration 8 --as-uid 65534 > "$T/claim.out" &
CL=$!
sleep 1
"$HX_CLIENT" notify "$T/coordd.sock" --jobs 401 --job-uid 1000 --nodes 'n1' >/dev/null || fail notify
wait $CL && fail "a wrong claim survived coordd's uid"
grep -qE 'REFUSED|CLOSED' "$T/claim.out" || fail "claim not evicted: $(cat "$T/claim.out")"

out=$("$HX_CLIENT" hello-schedd 127.0.0.1:$PC --as-uid 65534) && fail "uid 65534 registered as a schedd"
echo "$out" | grep -q 'neither root nor SlurmUser' || fail "schedd refusal reason: $out"
out=$("$HX_CLIENT" notify "$T/coordd.sock" --jobs 402 --job-uid 65534 --nodes n1 --as-uid 65534) \
    && fail "uid 65534 sent a job event"
echo "$out" | grep -q 'REFUSED' || fail "notify refusal: $out"
out=$("$HX_CLIENT" hello-ctl 127.0.0.1:$PC --as-uid 65534) || fail "read-only ctl refused: $out"
# HelloAck carries the server's Unix time: on one host the offset is ~0.
# (v + 0: a field edited by sub() compares as a string, and "-0.000061" <
# "-0.05" as strings: every negative offset failed.)
echo "$out" | awk '{ sub("offset_s=", "", $2); v = $2 + 0; if ($2 == "none" || v > 0.05 || v < -0.05) exit 1 }' \
    || fail "no or implausible server clock offset from the HelloAck: $out"
grep -c 'refused' "$T/coordd.log" | grep -qv '^0$' || fail "coordd did not log refusals"
echo PASS
