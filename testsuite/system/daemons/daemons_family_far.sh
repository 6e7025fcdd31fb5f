#!/bin/bash
# A phase-family member far past its family's period (more than
# kFamilyFarOutrunTolerance, 25 %, policy/outrun.h) misses every slot: it
# leaves as soon as a gated job outside families would (kOutrunEpochs
# epochs, kOutrunIterations periods), not after kFamilyOutrunS (30 s) as one
# settling a few per cent past does (daemons.family_outrun). A family formed
# from a busy 4:1 cluster's first jobs met the later ones at their peak and
# its members ran 40-100 % past its period for 31 s (doc/scale.md,
# "Stop 43"). The four cross-leaf 0.2 s rings of daemons.groups form a
# family; after 4 s job 4's hooks report 0.30 s iterations (48 % past), its
# collective stretched from 60 to 160 ms by collisions the plan does not see.
# coordd takes job 4 out of the family within seconds and says why, its owner
# runs it free for the hold, it joins again after it and leaves again for a
# hold twice as long, and jobs 1-3 stay in their windows.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
family_with_slow_member 0.30 0.16 24
outran_family 4 '0\.30' 2 6
# Out within seconds of its first slow iterations (4 s after the start), long
# before the 30 s a settling member is given.
family_member_left 4 2 12 '[56]' 1 2 3
# Back in its window after the hold, it misses its slots again and leaves
# for twice as long: joining again did not clear its count (policy/holds.h).
outran_family 4 '0\.30' 2 12
echo PASS
