#!/usr/bin/env bash
# Re-run the whole unseen20b corpus against a ddpify checkout, one job at a time (the machine has 2 cores):
#   ROOT=/path/to/checkout run/run_all.sh [MODES]      (default ROOT=/work/main, MODES="orig convert ddp plain verify follow")
# Needs the fetched repos under CORPUS (default /work/corpus-unseen20b, see ../sources.tsv and README in RESULTS.md)
# and their deps in $CORPUS/_deps (fire, termcolor, ConfigArgParse) and /work/corpus-unseen20/_deps (pillow, numpy, scipy).
# Logs go to ../logs/NAME.MODE.txt, conversion reports to ../reports/.
cd "$(dirname "$0")"
MODES="${1:-orig convert ddp plain verify follow}"
for name in poetry_main adain_main acgan_main stargan_main wonders_finetune repdistiller_student deepda_main cs230_vision_train; do
  for mode in $MODES; do
    if [ "$mode" = follow ] && ! grep -q '^FOLLOW=' "$name.sh"; then continue; fi
    if [ "$mode" = convert ]; then MODE=convert ./$name.sh > /dev/null 2>&1; echo "$name convert rc=$?"; continue; fi
    MODE=$mode ./$name.sh > "../logs/$name.$mode.txt" 2>&1; echo "$name $mode rc=$?"
  done
done
