#!/usr/bin/env bash
# The whole test suite: unit, golden, CLI and real torchrun (CPU, gloo) tests.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k golden`.
source "$(dirname "$0")/env.sh"
cd "$ROOT"
exec python -m pytest -n "${DDPIFY_TEST_WORKERS:-2}" -q "$@"
