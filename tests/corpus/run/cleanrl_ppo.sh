#!/usr/bin/env bash
# vwxyzjn/cleanrl ppo.py: CartPole-v1 (gymnasium, pure Python), 1024 steps = 8 PPO iterations, CPU.
# Needs gymnasium + tyro (EXTRA_PYTHONPATH); TensorBoard is stubbed.
NAME=cleanrl_ppo
source "$(dirname "$0")/_common.sh"
export CORPUS_STUBS=tb
$RUNNER "$SCRIPT" --total-timesteps 1024 --num-envs 2 --num-steps 64 --num-minibatches 2 --update-epochs 2 --no-cuda
check
