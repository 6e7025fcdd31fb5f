#!/bin/bash
# A phase-family member that stays past its family's period (more than
# kFamilyOutrunTolerance, less than kFamilyFarOutrunTolerance: 5-25 %) misses
# its slots for good (a gpt3-6.7b ring beside dlrm jobs ran 16 % past its 4.57 s
# for its whole life and waited 29 % of it at the gate; doc/scale.md,
# "Stop 39"). The four cross-leaf jobs of daemons.groups form a family of
# 0.2 s rings; after 4 s job 4's hooks report 0.24 s iterations (19 % past),
# their collective stretched from 60 to 100 ms by collisions the plan does
# not see (its own rhythm still fits the family: a slower compute would not,
# and would leave at once).
# Once that has lasted kFamilyOutrunS (30 s, policy/outrun.h) coordd takes
# job 4 out of the family and says why, its owner runs it free for the
# hold coordd passes on (after which it may join again), and jobs 1-3 stay
# in their windows. Within the
# tolerance (the family settling) nobody leaves: the first 30 s check that.
SRC=$1 BUILD=$2
. "$SRC/testsuite/system/daemons/lib.sh"
family_with_slow_member 0.24 0.10 42
outran_family 4 '0\.24' 30 6
# Not before 30 s of outrunning (the 4 s of warm-up plus 30); its owner runs
# it free for the hold (30 epochs of 0.2 s here).
family_member_left 4 30 40 '[56]' 1 2 3
echo PASS
