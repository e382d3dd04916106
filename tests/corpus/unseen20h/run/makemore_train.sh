#!/usr/bin/env bash
# karpathy/makemore makemore.py: a module-level __main__ block; the model class picked by --type among six
# (transformer here); create_datasets() shuffles the words with torch.randperm and splits train/test; the training data
# come from InfiniteDataLoader (a class wrapping a DataLoader over RandomSampler(replacement=True, num_samples=1e10), whose
# .next() re-iterates on StopIteration) in an endless while-True loop ended by --max-steps; evaluate() (a helper with
# its own shuffled DataLoaders, max_batches) every 500 steps, SummaryWriter scalars, model.pt saved when the test loss
# is the best so far (a best checkpoint), print_samples() every 200 steps (generate() calls model.get_block_size() and
# the model's forward under inference mode; samples checked against both datasets). Data: the first 400 names of the
# repo's names.txt written by setup() to tiny_names.txt (40 test words). 501 steps, batch 8, a 1-layer transformer.
NAME=makemore_train REPO=makemore SCRIPT=makemore.py
ARGS=(--input-file tiny_names.txt --work-dir out --num-workers 0 --max-steps 501 --device cpu --seed 3407
      --type transformer --n-layer 1 --n-head 2 --n-embd 16 --n-embd2 16 --batch-size 8 --learning-rate 5e-4)
setup() { head -n 400 names.txt > tiny_names.txt; }
SHOW_FILES="out/*"; CKPTS="out/model.pt"
source "$(dirname "$0")/_common.sh"
