#!/usr/bin/env bash
# The libcst floor pyproject.toml declares is tested, not hoped: a venv with exactly that
# release runs the tests that depend on libcst's internals (the visit-order table behind the
# flat trees, checked on a source with every statement kind) and every golden conversion.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FLOOR="$(sed -n 's/^ *"libcst>=\([0-9.]*\)".*/\1/p' "$ROOT/pyproject.toml")"
VENV="${DDPIFY_FLOOR_VENV:-$ROOT/.venv-libcst-floor}"
if [ "$("$VENV/bin/python" -c 'import libcst, importlib.metadata as m; print(m.version("libcst"))' 2>/dev/null)" != "$FLOOR" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "libcst==$FLOOR" click jinja2 pytest
fi
cd "$ROOT"
echo "libcst floor $FLOOR:"
PYTHONPATH="$ROOT" "$VENV/bin/python" -m pytest -q -p no:cacheprovider "tests/tree/test_cstutil.py" -k tricky
PYTHONPATH="$ROOT" "$VENV/bin/python" -m pytest -q -p no:cacheprovider "tests/convert/test_golden.py" -k "test_golden and not report"
