#!/usr/bin/env bash
# pradyuprasad/nanogpt train_gpt.py: synthetic input.txt (so utils.load_text never downloads; requests is
# stubbed to fail if it tried), the repository's model.py / generate.py / utils.py from $SUPPORT/pradyu with
# model.Config shrunk by sed (30 iterations, 1 small layer). Needs einops (EXTRA_PYTHONPATH).
NAME=pradyu_nanogpt
source "$(dirname "$0")/_common.sh"
export CORPUS_STUBS=requests
cp "$SUPPORT/pradyu/generate.py" "$SUPPORT/pradyu/utils.py" .
sed -e 's/context_length = 256/context_length = 16/' -e 's/max_iters = 5000/max_iters = 30/' -e 's/embedding_dim = 384/embedding_dim = 32/' \
    -e 's/num_heads = 6/num_heads = 2/' -e 's/head_size = 64/head_size = 16/' -e 's/num_layers = 6/num_layers = 1/' "$SUPPORT/pradyu/model.py" > model.py
grep -q 'max_iters = 30' model.py
"$PYTHON" - <<'PY'
import random, string
random.seed(1)
alphabet = "\n !$&',-.3:;?" + string.ascii_uppercase + string.ascii_lowercase  # the 65 characters of tinyshakespeare (model.Config.vocab_size = 65)
assert len(alphabet) == 65
open("input.txt", "w").write("".join(random.choice(alphabet) for _ in range(30000)) + "First Citizen:\n" + alphabet)
PY
$RUNNER "$SCRIPT"
check
