"""unseen20t cGAN: after training, ``for e in range(train_epoch): images.append(imageio.imread(..))``
then ``imageio.mimsave(gif)``. The gif was written by every rank (imageio's animation writer was
not known as a write), and the read-back loop, counting epochs, got a ``set_epoch`` although it
iterates no data. Image, animation, audio and video writers of the common libraries run on
rank 0; a loop counting epochs that names no loader and has neither a loop nor a call that may
iterate one gets no ``set_epoch``."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import imageio
import skimage.io
import soundfile
import torch
import torch.nn as nn
import torchaudio
import torchvision

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
train_epoch = 2
for epoch in range(train_epoch):
    for x, y in loader:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
images = []
for e in range(train_epoch):
    img_name = "res_" + str(e) + ".png"
    images.append(imageio.imread(img_name))
{write}
"""


@pytest.mark.parametrize(
    "write",
    [
        "imageio.mimsave('animation.gif', images, fps=5)",
        "imageio.v2.mimwrite('animation.gif', images)",
        "imageio.imsave('last.png', images[-1])",
        "skimage.io.imsave('last.png', images[-1])",
        "torchvision.io.write_png(torch.zeros(1, 4, 4, dtype=torch.uint8), 'last.png')",
        "torchaudio.save('sample.wav', torch.zeros(1, 100), 16000)",
        "soundfile.write('sample.wav', images[-1], 16000)",
    ],
)
def test_media_writers_run_on_rank_zero(write: str) -> None:
    result = convert_source(_SCRIPT.format(write=write))
    assert f"if ddpify.is_main_process():\n    {write}" in result.output
    assert "on rank 0 only" in "\n".join(c.what for c in result.changes)


def test_a_loop_counting_epochs_over_no_data_gets_no_set_epoch() -> None:
    result = convert_source(_SCRIPT.format(write=""))
    assert result.output.count("ddpify.set_epoch(") == 1
    assert "ddpify.set_epoch(loader, epoch)" in result.output


@pytest.mark.parametrize("body", ["run_epoch(loader)", "for x, y in loader:\n        pass", "trainer.fit(images)"])
def test_a_loop_that_may_pass_over_data_keeps_its_set_epoch(body: str) -> None:
    script = _SCRIPT.format(write="").replace('images.append(imageio.imread(img_name))', body)
    script = script.replace("images = []\n", "images = []\n\n\ndef run_epoch(loader):\n    for x, y in loader:\n        pass\n\n\n")
    assert "ddpify.set_epoch(loader, e)" in convert_source(script).output


def test_a_loop_calling_a_trainer_method_named_like_a_container_method_keeps_set_epoch() -> None:
    """``trainer.update()`` is no list's ``update`` (review of this change)."""
    script = _SCRIPT.format(write="").replace("images.append(imageio.imread(img_name))", "trainer.update()")
    assert "ddpify.set_epoch(loader, e)" in convert_source(script).output


def test_a_media_file_read_back_waits_for_rank_zero() -> None:
    script = _SCRIPT.format(write="torchvision.io.write_file('out.bin', torch.zeros(4, dtype=torch.uint8))\nwith open('out.bin', 'rb') as f:\n    data = f.read()")
    output = convert_source(script).output
    assert output.index("torchvision.io.write_file(") < output.index("ddpify.barrier()") < output.index("with open('out.bin'")
