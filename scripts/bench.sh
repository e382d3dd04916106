#!/usr/bin/env bash
# ddpify's speed vs libcst parse-only, TorchFix, import click/torch and hand-written DDP, in one
# run (medians, ratios). Arguments go to benchmarks/run.py, e.g.
#   bash scripts/bench.sh                    # the project's examples/ and tests/fixtures/
#   bash scripts/bench.sh corpus/ --repeat 3 # a big corpus (see docs/speed.md)
# TorchFix goes into benchmarks/.venv (git-ignored), never into ./.venv.
source "$(dirname "$0")/env.sh"
cd "$ROOT"
exec python benchmarks/run.py "$@"
