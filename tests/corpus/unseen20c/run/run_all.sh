#!/usr/bin/env bash
# Re-run the unseen20c corpus against a ddpify checkout, one job at a time:
#   ROOT=/path/to/checkout run/run_all.sh [MODES]      (LOGS=../logs_X REPORTS=... to keep earlier runs)
#        (default ROOT=/work/main, MODES="orig convert ddp plain verify")
cd "$(dirname "$0")"
MODES="${1:-orig convert ddp plain verify}"
LOGS="${LOGS:-../logs}"; mkdir -p "$LOGS"
NAMES="${NAMES:-resnet_cifar10_trainer cutout_train sentencevae_train nestedunet_train wideresnet_train sagan_main ram_main vqvae_main}"
for name in $NAMES; do
  for mode in $MODES; do
    if [ "$mode" = convert ]; then MODE=convert ./$name.sh > /dev/null 2>&1; echo "$name convert rc=$?"; continue; fi
    MODE=$mode ./$name.sh > "$LOGS/$name.$mode.txt" 2>&1; echo "$name $mode rc=$?"
  done
done
