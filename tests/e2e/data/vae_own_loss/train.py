"""Lagging-inference-style VAE training: pre-built batches visited in a numpy permutation,
an inner encoder-only loop that draws more batches and stops when its loss stops falling, a
joint step after it, stdout replaced by a tee into a log file."""

import sys

import numpy as np
import torch
import torch.optim as optim

from modules import VAE, Decoder, Encoder, Tee


def main():
    np.random.seed(0)
    torch.manual_seed(0)
    data = torch.randn(96, 8)
    batches = [data[i : i + 8] for i in range(0, 96, 8)]
    vae = VAE(Encoder(), Decoder())
    enc_optimizer = optim.SGD(vae.encoder.parameters(), lr=0.05)
    dec_optimizer = optim.SGD(vae.decoder.parameters(), lr=0.05)
    aggressive = True
    for epoch in range(2):
        for i in np.random.permutation(len(batches)):
            batch = batches[i]
            sub_iter, burn_pre_loss, burn_cur_loss = 1, 1e4, 0.0
            while aggressive and sub_iter < 20:
                enc_optimizer.zero_grad()
                dec_optimizer.zero_grad()
                loss, rec, kl = vae.loss(batch, 0.5)
                burn_cur_loss += loss.sum().item()
                loss.mean().backward()
                enc_optimizer.step()
                batch = batches[np.random.random_integers(0, len(batches) - 1)]
                if sub_iter % 3 == 0:
                    if burn_pre_loss - burn_cur_loss < 0:
                        break
                    burn_pre_loss, burn_cur_loss = burn_cur_loss, 0.0
                sub_iter += 1
            enc_optimizer.zero_grad()
            dec_optimizer.zero_grad()
            loss, rec, kl = vae.loss(batches[i], 0.5)
            loss.mean().backward()
            dec_optimizer.step()
        aggressive = epoch == 0
        print("epoch", epoch, "loss", loss.mean().item())
    torch.save(vae.state_dict(), "vae.pt")


if __name__ == "__main__":
    sys.stdout = Tee("train.log")
    main()
