#!/usr/bin/env bash
# CTest fixture cleanup: stop every daemon of the test cluster (bounded).
set -uo pipefail
. "$(dirname "$0")/lib.sh" "$1" "$2"
"$MC/down" "$CLUSTER"
