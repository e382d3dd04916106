# Sourced by the other scripts: make ./.venv with ddpify (editable), CPU torch and test tools.
# Idempotent; reinstalls when pyproject.toml changed. torch is pinned to the CPU build these
# machines carry; an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${DDPIFY_VENV:-$ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
STAMP="$VENV/.ddpify-installed"
WANT="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  "$VENV/bin/pip" install -q --disable-pip-version-check "torch==${DDPIFY_TORCH_VERSION:-2.13.0}"
  "$VENV/bin/pip" install -q --disable-pip-version-check -e "$ROOT[torch,test]"
  echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
