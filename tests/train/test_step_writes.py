"""Checkpoints and LoRA adapters are written by one writer (checkpoint.write_step): the same
atomicity, the same one-line WriteError, and the same refusal to rename over a device or a pipe."""
from __future__ import annotations

import os
import stat

import pytest

from examprep.train import checkpoint
from examprep.train.data import TASKS, task_vocab
from examprep.checkpoints.errors import WriteError
from examprep.train.finetune import save_adapter
from examprep.train.lora import add_adapters
from examprep.train.model import build_model

from .helpers import small_config


def _model():
    vocab = task_vocab(TASKS["copy"])
    return build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab))), vocab


def _writers():
    model, vocab = _model()
    adapted = add_adapters(_model()[0], rank=2, alpha=4.0, targets=("q", "v"))
    return {"checkpoint": lambda run: checkpoint.save(run, 3, model, vocab, vocab, {}),
            "adapter": lambda run: save_adapter(run, 3, adapted, {}, None)}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("what", ["checkpoint", "adapter"])
def test_latest_that_is_a_named_pipe_is_refused_and_stays_a_pipe(tmp_path, what):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "latest")
    with pytest.raises(WriteError) as err:
        _writers()[what](run)
    assert str(err.value).startswith(f"could not write {what} {run / 'step-000003'}: {run / 'latest'}: is not a "
                                     f"regular file")
    assert str(err.value).endswith(f"no earlier {what} exists") and "\n" not in str(err.value)
    assert stat.S_ISFIFO(os.stat(run / "latest").st_mode)                   # not replaced by a regular file
    assert [p.name for p in run.iterdir()] == ["latest"]                    # nothing half-written beside it


def test_an_adapter_the_library_cannot_serialise_is_a_one_line_write_error(tmp_path, monkeypatch):
    import safetensors.torch
    from safetensors import SafetensorError

    def full(tensors, filename, metadata=None):
        open(filename, "wb").write(b"half")
        raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                              'message: "No space left on device" })')

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    with pytest.raises(WriteError) as err:
        _writers()["adapter"](tmp_path / "run")
    assert str(err.value) == (f"could not write adapter {tmp_path / 'run' / 'step-000003'}: No space left on device; "
                              f"no earlier adapter exists")
    assert list((tmp_path / "run").iterdir()) == []

