"""Checkpoints that can be trusted: each file's SHA-256 is recorded in config.json and checked when
loading (older checkpoints without hashes still load), weights holding NaN or infinity are refused,
stale temporary step directories of an interrupted write are removed by the next run or resume,
and the numpy reader of the attention-from-model generator checks the same. Every refusal is one
error line, never an empty translation with exit status 0."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
from safetensors.torch import load_file, save_file
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint
from examprep.checkpoints.errors import CheckpointError
from examprep.train.report import summary
from examprep.train.trainer import TrainOptions, TrainResult, train

runner = CliRunner()
TINY = dict(task="reverse", d_model=32, layers=1, heads=4, d_ff=64, batch_tokens=400, eval_size=50,
            eval_every=1000, warmup=20, lr_factor=1.0)


def _copy(src, dest):
    shutil.copytree(src, dest)
    return dest, dest / (dest / "latest").read_text(encoding="utf-8").strip()


def _translate(run):
    return runner.invoke(app, ["translate", "--checkpoint", str(run), "29 Nov 2026"])


def _one_error_line(res, *fragments):
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.output
    for fragment in fragments:
        assert fragment in res.stderr, res.stderr


def test_config_records_the_sha256_of_every_other_file(tiny_dates):
    step = checkpoint.latest(tiny_dates)
    files = json.loads((step / "config.json").read_text())["files"]
    assert set(files) == {"model.safetensors", "vocab.json", "trainer.pt"}
    for name, digest in files.items():
        assert digest == hashlib.sha256((step / name).read_bytes()).hexdigest()


def test_a_changed_byte_in_the_weights_is_refused_not_translated(tiny_dates, tmp_path):
    run, step = _copy(tiny_dates, tmp_path / "run")
    f = step / "model.safetensors"
    data = bytearray(f.read_bytes())
    data[-1] ^= 0x01                         # the last mantissa bits of the last weight: still a valid file
    f.write_bytes(bytes(data))
    load_file(str(f))                        # safetensors itself sees nothing wrong
    _one_error_line(_translate(run), str(f), "SHA-256")
    with pytest.raises(CheckpointError, match="SHA-256"):
        checkpoint.load(run)


def test_a_changed_vocabulary_or_optimizer_state_is_refused(tiny_dates, tmp_path):
    run, step = _copy(tiny_dates, tmp_path / "run")
    vocab = json.loads((step / "vocab.json").read_text())
    (step / "vocab.json").write_text(json.dumps(vocab, indent=3))         # same content, other bytes
    _one_error_line(_translate(run), "vocab.json", "SHA-256")
    run2, step2 = _copy(tiny_dates, tmp_path / "run2")
    with open(step2 / "trainer.pt", "ab") as fh:
        fh.write(b"\0")
    loaded = checkpoint.load(run2)                                        # translating needs no trainer.pt
    with pytest.raises(CheckpointError, match="trainer.pt.*SHA-256"):
        loaded.trainer_state()


def _with_nan(step, *, keep_hashes: bool):
    tensors = load_file(str(step / "model.safetensors"))
    name = sorted(tensors)[0]
    tensors[name][0] = float("nan")
    save_file(tensors, str(step / "model.safetensors"), metadata={"format": checkpoint.FORMAT})
    meta = json.loads((step / "config.json").read_text())
    if keep_hashes:         # as a tool that rewrote the weights and their hash would leave it
        meta["files"]["model.safetensors"] = hashlib.sha256((step / "model.safetensors").read_bytes()).hexdigest()
    else:                   # an older checkpoint: no hashes at all
        del meta["files"]
    (step / "config.json").write_text(json.dumps(meta))
    return name


@pytest.mark.parametrize("keep_hashes", [True, False], ids=["hashed", "older"])
def test_weights_holding_nan_are_a_checkpoint_error(tiny_dates, tmp_path, keep_hashes):
    run, step = _copy(tiny_dates, tmp_path / "run")
    name = _with_nan(step, keep_hashes=keep_hashes)
    _one_error_line(_translate(run), name, "NaN")


def test_an_older_checkpoint_without_hashes_still_loads_and_translates(tiny_dates, tmp_path):
    run, step = _copy(tiny_dates, tmp_path / "run")
    meta = json.loads((step / "config.json").read_text())
    del meta["files"]
    (step / "config.json").write_text(json.dumps(meta))
    here, there = _translate(tiny_dates), _translate(run)
    assert there.exit_code == 0 and there.stdout == here.stdout
    assert checkpoint.load(run).trainer_state()["step"] > 0


@pytest.mark.parametrize("damage", ["byte", "nan"])
def test_the_numpy_reader_of_attention_from_model_checks_the_same(tiny_dates, tmp_path, damage):
    run, step = _copy(tiny_dates, tmp_path / "run")
    if damage == "byte":
        f = step / "model.safetensors"
        data = bytearray(f.read_bytes())
        data[-1] ^= 0x01
        f.write_bytes(bytes(data))
        fragments = (str(f), "SHA-256")
    else:
        fragments = (_with_nan(step, keep_hashes=True), "NaN")
    res = runner.invoke(app, ["generate", "attention-from-model", "--checkpoint", str(run), "--seed", "1"])
    _one_error_line(res, *fragments)


def _opts(tmp_path, **kw):
    return TrainOptions(**{**TINY, "out": str(tmp_path / "run"), **kw})


def test_stale_temporary_step_directories_are_removed_on_resume(tmp_path):
    train(_opts(tmp_path, steps=3))
    run = tmp_path / "run"
    dead = run / ".step-000007.tmp-999999999"             # no such process: a write killed half-way
    dead.mkdir()
    (dead / "model.safetensors").write_bytes(b"\0" * 100_000)
    pointer = run / ".latest.tmp-999999999"
    pointer.write_text("step-000007\n")
    alive = run / f".step-000008.tmp-{os.getppid()}"        # another live process: its write is not ours to remove
    alive.mkdir()
    train(_opts(tmp_path, steps=5, resume=True))
    assert not dead.exists() and not pointer.exists() and alive.exists()
    assert checkpoint.latest(run).name == "step-000005"


def test_stale_temporary_directories_are_removed_by_a_new_run_too(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / ".step-000100.tmp-999999999").mkdir()
    train(_opts(tmp_path, steps=2))
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".")) == []


def _result(evals, steps, stopped):
    return TrainResult(run_dir="runs/x", checkpoint="runs/x/step-000037", first_step=1, steps=steps, losses=[1.0],
                       evals=evals, train_seconds=3.0, wall_seconds=4.0, tokens_per_second=1000.0, stopped=stopped)


METRICS = {"token_accuracy": 0.5, "exact_match": 0.25, "pairs": 50, "split": "held-out"}


def test_after_ctrl_c_the_held_out_line_says_which_step_it_measured():
    text = summary(_result([{"step": 20, **METRICS}], steps=37, stopped="interrupted"))
    line = next(line for line in text.splitlines() if "held-out" in line)
    assert line.startswith("last evaluation, at step 20 (not at step 37):"), line
    final = summary(_result([{"step": 37, **METRICS}], steps=37, stopped="steps"))
    assert any(line.startswith("held-out: token acc") for line in final.splitlines())


# ------------------------------------------------------- the torch-free reader knows the model's names

@pytest.mark.parametrize("positions,norm,share", [("rope", "post", "all"), ("learned", "pre", "none"),
                                                  ("sinusoidal", "post", "output")])
def test_the_torch_free_reader_names_exist_in_the_models_state_dict(positions, norm, share):
    """examprep.checkpoints.stored.Weights writes the state-dict names once (the generators read a model
    through it, never by hard-coded names): every name it reads is one the torch model has."""
    from examprep.checkpoints.config import TransformerConfig
    from examprep.train.model import build_model
    from examprep.checkpoints.stored import Weights

    cfg = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12 if share == "all" else 14, d_model=8, n_heads=2,
                            d_ff=16, n_encoder_layers=2, n_decoder_layers=1, positions=positions, norm=norm,
                            share_embeddings=share)
    names = set(build_model(cfg).state_dict())
    a = "encoder.layers.1.self_attn."
    assert {a + "qkv_proj.weight", a + "q_bias", a + "v_bias", "encoder.layers.1.norm1.weight",
            "encoder.layers.1.norm1.bias"} <= names
    assert (Weights.POSITION_TABLE in names) == (positions == "learned")
    assert any(n in names for n in Weights.EMBEDDINGS["source"]) and any(n in names for n in Weights.EMBEDDINGS["target"])


def test_the_torch_free_reader_reads_the_numbers_torch_loads(tiny_dates):
    import numpy as np

    from examprep.checkpoints.stored import read_checkpoint

    stored, weights = read_checkpoint(tiny_dates)
    model = checkpoint.load(tiny_dates).model
    attn = model.encoder.layers[0].self_attn
    d = stored.config.d_model
    sa = weights.encoder_self_attention(0)
    qkv = attn.qkv_proj.weight.detach().double().numpy()
    np.testing.assert_array_equal(sa.weight_q, qkv[:d])
    np.testing.assert_array_equal(sa.weight_k, qkv[d:2 * d])
    np.testing.assert_array_equal(sa.weight_v, qkv[2 * d:])
    np.testing.assert_array_equal(sa.bias_v, attn.v_bias.detach().double().numpy())
    np.testing.assert_array_equal(weights.embedding("source"), model.src_embed.weight.detach().double().numpy())
    assert weights.sha256 == hashlib.sha256((stored.path / "model.safetensors").read_bytes()).hexdigest()
    assert stored.source_vocab.index["<eos>"] == 2 and stored.config == checkpoint.load(tiny_dates).config
