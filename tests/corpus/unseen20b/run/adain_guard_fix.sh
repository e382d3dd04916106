#!/usr/bin/env bash
# Checks the runtime guard's advice for adain_main: the converted main_ddp.py (from $CORPUS/_converted) with
# prepare_model(model, find_unused_parameters=True), under torchrun with the check shim. Output: logs/adain_main.guard_fix.txt
set -u
W=$(mktemp -d /tmp/adainfix.XXXX); cp -r /work/corpus-unseen20b/pytorch-book/. $W/; cd $W/Chapter12; mkdir -p checkpoints
sed 's/model = ddpify.prepare_model(model)$/model = ddpify.prepare_model(model, find_unused_parameters=True)/' /work/corpus-unseen20b/_converted/adain_main/main_ddp.py > main_ddp.py
grep -n "prepare_model" main_ddp.py
R=/work/wtj20b/tests/corpus/unseen20b/run
export PYTHONPATH="$R/shim:/work/wtj20b/tests/corpus/run/shim:/work/corpus-unseen20b/_deps:/work/corpus-unseen20/_deps:$PWD" CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 PYTHONWARNINGS=ignore CORPUS_STUBS=mpl,tb,requests SHIM_N=16 SHIM_IMG=16 SHIM_SEED_BY_PATH=1 CORPUS_CHECK_DIR=$W/check
timeout 300 /work/main/.venv/bin/torchrun --standalone --nproc_per_node=2 main_ddp.py train --use_gpu=False --image_size=16 --batch_size=4 --epoches=5 --plot_every=1000 2>&1 | grep -v "it/s\]" | tail -5
echo "[run] torchrun exit ${PIPESTATUS[0]}"
/work/main/.venv/bin/python /work/wtj20b/tests/corpus/run/check_ranks.py $W/check --label adain_main_with_guard_fix
/work/main/.venv/bin/python $R/ckpt_keys.py checkpoints/*.pth
rm -rf $W
