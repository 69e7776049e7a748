"""Issue 40 item 2: the same weights give the same checkpoint bytes under any hash seed.

The SHA-256 of model.safetensors is printed in model-based problems and is the LoRA adapter's base
check, so it must not depend on the process that wrote it. safetensors' save_model recorded the
tied names in the file's metadata, a map written in an order drawn afresh in every process (and for
every map), so identical weights gave different files. Two Python processes with different
PYTHONHASHSEED values, as two runs would be, each write the same checkpoints twice; every file is
compared byte for byte (slow: two interpreters importing torch); the default run checks the same
within its own process, where the old writer already drew a new order for every file.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
import torch

from examprep.train import checkpoint
from examprep.train.model import build_model
from examprep.checkpoints.vocab import SPECIALS, Vocab
from tests.train.helpers import PYTHON, REPO, small_config

# One process: small models with tied embeddings (up to three names share one matrix) and an
# AdamW state after one step, weights drawn from a fixed seed, written by the trainer's writer.
WRITE = """
import sys, torch
from pathlib import Path
from examprep.train import checkpoint
from examprep.train.model import build_model
from examprep.checkpoints.vocab import SPECIALS, Vocab
from tests.train.helpers import small_config
vocab = Vocab(list(SPECIALS) + list("abcdefghijklmnopqr"), "char")
for share in ("all", "output"):
    torch.manual_seed(0)
    model = build_model(small_config(share_embeddings=share))
    assert len(vocab) == model.cfg.src_vocab_size
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.tensor([[5, 6, 7]]), torch.tensor([[1, 8]])).sum().backward()
    optimizer.step()
    state = {"optimizer": optimizer.state_dict(), "step": 3}
    for copy in (1, 2):
        checkpoint.save(Path(sys.argv[1]) / f"{share}-{copy}", 3, model, vocab, vocab,
                        {"data": {}, "training": {}, "metrics": {}}, state)
"""
FILES = {"model.safetensors", "config.json", "vocab.json", "trainer.pt"}


def _write(out: Path, hash_seed: int) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    subprocess.run([PYTHON, "-c", WRITE, str(out)], env=env, cwd=REPO, check=True, capture_output=True, text=True)
    return {(run.name, p.name): hashlib.sha256(p.read_bytes()).hexdigest()
            for run in sorted(out.iterdir()) for p in sorted((run / "step-000003").iterdir())}


def test_same_weights_same_bytes_in_one_process(tmp_path):
    vocab = Vocab(list(SPECIALS) + list("abcdefghijklmnopqr"), "char")
    model = build_model(small_config())                      # lm_head, src_embed, tgt_embed: one matrix
    written = {checkpoint.save(tmp_path / f"copy-{i}", 1, model, vocab, vocab, {}).joinpath(
        "model.safetensors").read_bytes() for i in range(4)}
    assert len(written) == 1
    loaded = checkpoint.load(tmp_path / "copy-0").model.state_dict()
    for name, tensor in model.state_dict().items():          # every tied name comes back, tied
        assert torch.equal(loaded[name], tensor), name
    assert loaded["src_embed.weight"].data_ptr() == loaded["lm_head.weight"].data_ptr()


@pytest.mark.slow
def test_same_weights_same_bytes_under_any_hash_seed(tmp_path):
    first, second = _write(tmp_path / "seed1", 1), _write(tmp_path / "seed2", 2)
    assert first == second                                   # across processes and hash seeds
    for share in ("all", "output"):
        for name in FILES:                                   # and twice within one process
            assert first[(f"{share}-1", name)] == first[(f"{share}-2", name)], (share, name)
    assert {name for _, name in first} == FILES
    assert first[("all-1", "model.safetensors")] != first[("output-1", "model.safetensors")]
