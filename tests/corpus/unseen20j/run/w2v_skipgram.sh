#!/usr/bin/env bash
# graykode/nlp-tutorial 1-2.Word2Vec/Word2Vec-Skipgram(Softmax).py: everything under `if __name__ == '__main__'`; a
# six-sentence corpus built in code, skip-gram pairs in a Python list; NO DataLoader: each of 5000 steps draws its
# minibatch with random_batch() = np.random.choice(range(len(skip_grams)), batch_size, replace=False) (numpy never
# seeded) and one-hot rows from np.eye; Word2Vec (two bias-free Linears), Adam, a loss print every 1000 steps; at the end
# model.parameters() unpacked into W, WT for a matplotlib scatter + plt.show() (stubbed: CORPUS_STUBS=mpl). No seed.
# Run: as written (no arguments; 5000 steps of batch 2).
NAME=w2v_skipgram REPO=nlp-tutorial SUBDIR=1-2.Word2Vec SCRIPT='Word2Vec-Skipgram(Softmax).py'
ARGS=()
source "$(dirname "$0")/_common.sh"
