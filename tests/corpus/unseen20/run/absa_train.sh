#!/usr/bin/env bash
# songyouwei/ABSA-PyTorch train.py, lstm model on laptop data truncated to 60/30 samples; empty GloVe file
# (zero embeddings); .graph pickles synthesized; transformers/sklearn stubbed (shim).
NAME=absa_train REPO=ABSA-PyTorch
source "$(dirname "$0")/_common.sh"
for f in datasets/semeval14/Laptops_Train.xml.seg:180 datasets/semeval14/Laptops_Test_Gold.xml.seg:90; do
  p=${f%:*}; head -n ${f#*:} "$p" > "$p.tmp" && mv "$p.tmp" "$p"
  "$PY" -c "import pickle,numpy as np,sys; n=sum(1 for _ in open(sys.argv[1]))//3; pickle.dump({3*i: np.eye(4) for i in range(n)}, open(sys.argv[1]+'.graph','wb'))" "$p"
done
: > glove.42B.300d.txt
go train.py --model_name lstm --dataset laptop --num_epoch 2 --batch_size 8 --hidden_dim 16 --max_seq_len 20 --lr 1e-3 --log_step 5
