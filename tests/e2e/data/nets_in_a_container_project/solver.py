"""The solver holds the nets a helper built and one optimizer per trained net, made in a loop
under the training mode; its ``train`` steps them in turn."""

import torch
import torch.nn as nn

from nets import build_nets


class Solver(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.nets, self.nets_ema = build_nets(args)
        for name, module in self.nets.items():
            setattr(self, name, module)
        if args.mode == "train":
            self.optims = {}
            for net in self.nets.keys():
                if net == "frozen":
                    continue
                self.optims[net] = torch.optim.Adam(self.nets[net].parameters(), lr=1e-2)
        self.to(self.device)

    def train(self, loaders):
        nets, args = self.nets, self.args
        for epoch in range(args.epochs):
            for x, y in loaders.train:
                x, y = x.to(self.device), y.to(self.device)
                fake = nets.generator(nets.frozen(x))
                d_loss = (nets.discriminator(fake.detach()) - y).pow(2).mean()
                self.optims["discriminator"].zero_grad()
                d_loss.backward()
                self.optims["discriminator"].step()
                g_loss = nets.discriminator(nets.generator(x)).pow(2).mean()
                self.optims["generator"].zero_grad()
                g_loss.backward()
                self.optims["generator"].step()
                with torch.no_grad():
                    for p, q in zip(nets.generator.parameters(), self.nets_ema.generator.parameters()):
                        q.lerp_(p, 0.1)
        torch.save({name: net.state_dict() for name, net in self.nets_ema.items()}, "ema.pt")
