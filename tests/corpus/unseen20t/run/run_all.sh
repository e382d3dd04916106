#!/usr/bin/env bash
# Re-run the unseen20t corpus against a ddpify checkout or export, one job at a time:
#   ROOT=/path PY=/path/python DDPIFY=/path/ddpify run/run_all.sh [MODES]   (LOGS=../logs_X REPORTS=... CONVERTED=... to keep runs apart)
#        (default ROOT=/work/main, MODES="orig convert ddp plain verify")
cd "$(dirname "$0")"
MODES="${1:-orig convert ddp plain verify}"
LOGS="${LOGS:-../logs}"; mkdir -p "$LOGS"
NAMES="${NAMES:-ncf vib darts dncnn dgcnn cgan}"
for name in $NAMES; do
  for mode in $MODES; do
    if [ "$mode" = convert ]; then MODE=convert ./$name.sh > /dev/null 2>&1; echo "$name convert rc=$?"; continue; fi
    MODE=$mode ./$name.sh > "$LOGS/$name.$mode.txt" 2>&1; echo "$name $mode rc=$?"
  done
done
