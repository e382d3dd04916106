#!/usr/bin/env bash
# The whole test suite: lint (ruff), type check (mypy, configured in pyproject.toml), unit, golden, CLI and real torchrun (CPU, gloo)
# tests, then the declared libcst floor. Extra arguments go to pytest (and skip the checks
# around it), e.g. `bash scripts/test.sh -k golden`.
source "$(dirname "$0")/env.sh"
cd "$ROOT"
if [ "$#" -gt 0 ]; then
  exec python -m pytest -n "${DDPIFY_TEST_WORKERS:-2}" -q "$@"
fi
ruff check ddpify
ruff format --check ddpify
mypy
python -m pytest -n "${DDPIFY_TEST_WORKERS:-2}" -q
bash scripts/libcst_floor.sh
