#!/bin/bash
# 4598266: the converted file minus its line `train_loader = ddpify.shard(train_loader, only_when_training=True)` (the cycle() generator around an already distributed_loader)
# then torchrun with the checks, pass_detail, ckpt_keys and verify of the same file.
set -uo pipefail
RUN=/work/main/tests/corpus/unseen20d/run
PY=/work/judge20d_4598266/bin/python; DDPIFY=/work/judge20d_4598266/bin/ddpify
W=$(mktemp -d /tmp/unseen20d_ddpmfix4598266.XXXXXX); trap 'rm -rf "$W"' EXIT
cp -r /work/corpus-unseen20d/DDPM/. $W/; cd $W; mkdir -p ckpt
export PYTHONPATH="$RUN/shim:$(cd $RUN/../../run/shim && pwd):$PWD"
export CUDA_VISIBLE_DEVICES="" OMP_NUM_THREADS=1 MPLBACKEND=Agg PYTHONWARNINGS=ignore CORPUS_STUBS=mpl,tb,requests CORPUS_FAKE_CUDA=1 SHIM_N=32
"$DDPIFY" scripts/train_cifar.py -o scripts/train_cifar_ddp.py 2>/dev/null
sed -i "/^\s*train_loader = ddpify.shard(train_loader, only_when_training=True)\s*$/d" scripts/train_cifar_ddp.py
grep -n "requires_grad_\|prepare_model" scripts/train_cifar_ddp.py
export CORPUS_CHECK_DIR=$W/check
timeout 300 /work/judge20d_4598266/bin/torchrun --standalone --nproc_per_node=2 scripts/train_cifar_ddp.py --iterations 6 --batch_size 8 --log_rate 3 --checkpoint_rate 3 --log_to_wandb False --log_dir ckpt --project_name t --run_name r --base_channels 32 --time_emb_dim 128 --num_timesteps 20 2>&1 | grep -v "^W1\|^\*\*\*\|OMP_NUM_THREADS"
echo "[run] torchrun exit ${PIPESTATUS[0]}"
"$PY" $RUN/../../run/check_ranks.py $CORPUS_CHECK_DIR --label "ddpm_cifar (hand fix 4598266: redundant ddpify.shard line deleted)"
"$PY" $RUN/pass_detail.py $CORPUS_CHECK_DIR
ls ckpt; "$PY" $RUN/ckpt_keys.py ckpt/*-model.pth
echo "--- verify of the same file"
timeout 300 "$DDPIFY" verify scripts/train_cifar_ddp.py -- --iterations 6 --batch_size 8 --log_rate 3 --checkpoint_rate 3 --log_to_wandb False --log_dir ckpt --project_name t --run_name r --base_channels 32 --time_emb_dim 128 --num_timesteps 20 2>&1 | sed -n '/ddpify verify/,$p'
