"""Checkpoints: written atomically, read back with every part checked against the others.

A run directory holds step directories and a pointer to the newest complete one:

    RUN/latest                  "step-000800" (replaced atomically after the step directory exists)
    RUN/step-000800/model.safetensors   weights (tied matrices stored once)
        config.json             {"format", "version", "step", "model": {...}, "data": {...},
                                 "training": {...}, "metrics": {...},
                                 "files": {"model.safetensors": SHA-256, "vocab.json": …, "trainer.pt": …}}
        vocab.json              {"source": {"level", "tokens"}, "target": {...}}
        trainer.pt              optimizer state, RNG states, counters (for --resume)

A step directory is written under a temporary name (.step-000800.tmp-PID) and renamed when
complete, then `latest` is replaced; so a crash, a full disk or Ctrl-C at any moment leaves the
previous checkpoint intact and `latest` always names a complete one. A write killed half-way
leaves its temporary directory, which the next run or --resume removes. Older step directories
beyond `keep` are removed.

Loading checks every file against the SHA-256 that config.json recorded (checkpoints written
before the hashes still load) and refuses weights holding NaN or infinity: a damaged checkpoint is
a CheckpointError naming the file, never a model that translates to nothing.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch

from examprep.train.data import Vocab
from examprep.train.rundir import file_sha256, hash_problem, nonfinite_tensor, read_latest, remove_stale_temporaries
from examprep.train.errors import CheckpointError, ConfigError, WriteError
from examprep.train.model import TransformerConfig, build_model

FORMAT, VERSION = "examprep-transformer", 1
FILES = ("model.safetensors", "config.json", "vocab.json")


@dataclass
class Loaded:
    path: Path                    # the step directory
    model: torch.nn.Module
    config: TransformerConfig
    source_vocab: Vocab
    target_vocab: Vocab
    meta: dict                    # the whole config.json

    @property
    def data(self) -> dict:
        return self.meta.get("data", {})

    def trainer_state(self, map_location="cpu") -> dict:
        path = self.path / "trainer.pt"
        if not path.exists():
            raise CheckpointError(f"{self.path} has no trainer.pt (optimizer state): it cannot be resumed")
        problem = hash_problem(self.path, self.meta, ["trainer.pt"])
        if problem is not None:
            raise CheckpointError(problem)
        try:
            return torch.load(path, map_location=map_location, weights_only=True)
        except Exception as err:  # a truncated or foreign file: say which
            raise CheckpointError(f"{path} cannot be read ({type(err).__name__}: {err})") from None


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_json(path: Path, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def latest(run_dir: Path | str) -> Optional[Path]:
    """The newest complete step directory of a run, or None if the run has none."""
    return read_latest(run_dir)[0]


def save(run_dir: Path | str, step: int, model: torch.nn.Module, source_vocab: Vocab,
         target_vocab: Vocab, meta: dict, trainer_state: Optional[dict] = None, keep: int = 2) -> Path:
    """Write step `step` of a run; returns the step directory. Raises WriteError (nothing lost)."""
    from safetensors import SafetensorError
    from safetensors.torch import save_model

    run_dir = Path(run_dir)
    name = f"step-{step:06d}"
    final = run_dir / name
    previous = latest(run_dir)
    if previous is not None and previous.name == name:
        return previous                                   # this very state is already saved
    tmp = run_dir / f".{name}.tmp-{os.getpid()}"
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(run_dir)                 # ours from an earlier attempt, or a killed writer's
        tmp.mkdir()
        save_model(model, str(tmp / "model.safetensors"), metadata={"format": FORMAT})
        _write_json(tmp / "vocab.json", {"source": source_vocab.to_dict(), "target": target_vocab.to_dict()})
        # safetensors creates its file 0600; give it the mode of the others (0666 & ~umask)
        os.chmod(tmp / "model.safetensors", os.stat(tmp / "vocab.json").st_mode & 0o777)
        if trainer_state is not None:
            with open(tmp / "trainer.pt", "wb") as f:
                torch.save(trainer_state, f)
                f.flush()
                os.fsync(f.fileno())
        files = {f: file_sha256(tmp / f) for f in ("model.safetensors", "vocab.json", "trainer.pt")
                 if (tmp / f).exists()}
        _write_json(tmp / "config.json", {"format": FORMAT, "version": VERSION, "step": step,
                                          "model": model.cfg.to_dict(), **meta, "files": files})
        _fsync_dir(tmp)
        if final.exists():                                # a stale copy from an older run
            shutil.rmtree(final)
        os.replace(tmp, final)
        pointer_tmp = run_dir / f".latest.tmp-{os.getpid()}"
        pointer_tmp.write_text(name + "\n", encoding="utf-8")
        os.replace(pointer_tmp, run_dir / "latest")
        _fsync_dir(run_dir)
    except (OSError, RuntimeError, SafetensorError) as err:
        shutil.rmtree(tmp, ignore_errors=True)
        kept = f"the previous checkpoint {previous} is kept" if previous else "no earlier checkpoint exists"
        reason = _reason(err)
        raise WriteError(f"could not write checkpoint {final}: {reason}; {kept}") from None
    steps = sorted((p for p in run_dir.glob("step-*") if p.name[5:].isdigit()), key=lambda p: int(p.name[5:]))
    for old in steps[:-keep] if keep > 0 else []:
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return final


def _reason(err: BaseException) -> str:
    """One line saying why a write failed: the OS's words when there are any (safetensors wraps them
    as `IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })`)."""
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    text = str(err)
    found = re.search(r'message: "([^"]*)"', text)
    if found:
        return found.group(1)
    lines = text.strip().splitlines()
    return lines[0] if lines else type(err).__name__


def resolve(path: Path | str) -> Path:
    """A step directory from a run directory (its `latest`) or a step directory itself."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint {path} does not exist")
    if not path.is_dir():
        hint = f" ({path.parent} here)" if (path.parent / "config.json").is_file() else ""
        raise CheckpointError(f"checkpoint {path} is a file, but a directory is expected: the run directory "
                              f"or the step directory that holds config.json{hint}")
    if (path / "config.json").is_file():
        return path
    step_dir, problem = read_latest(path)
    if problem is not None:
        raise CheckpointError(problem)
    if step_dir is None:
        raise CheckpointError(f"{path} holds no checkpoint (no 'latest' and no config.json); "
                              f"train one with `examprep train --out {path}`")
    return step_dir


def load(path: Path | str, device: str | torch.device = "cpu") -> Loaded:
    """Load a checkpoint (run or step directory) and check that config, vocabulary and weights fit."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model, safe_open

    step_dir = resolve(path)
    missing = [f for f in FILES if not (step_dir / f).is_file()]
    if missing:
        raise CheckpointError(f"checkpoint {step_dir} is missing {', '.join(missing)}")
    meta = _read_json(step_dir / "config.json")
    problem = hash_problem(step_dir, meta, ["model.safetensors", "vocab.json"])   # trainer.pt: when resuming
    if problem is not None:
        raise CheckpointError(problem)
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{step_dir / 'config.json'} is not an examprep checkpoint config "
                              f"(format {meta.get('format')!r})")
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CheckpointError(f"{step_dir / 'config.json'}: version must be a positive integer, got {version!r}")
    if version > VERSION:
        raise CheckpointError(f"{step_dir / 'config.json'} is checkpoint version {version}, written by a newer "
                              f"examprep; this examprep reads version {VERSION}: upgrade examprep to load it")
    data = meta.get("data", {})
    max_target = data.get("max_target_tokens") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not (max_target is None or (isinstance(max_target, int)
                                                                 and not isinstance(max_target, bool))):
        what = "data must be a JSON object" if not isinstance(data, dict) else \
            f"data.max_target_tokens must be an integer, got {max_target!r}"
        raise CheckpointError(f"{step_dir / 'config.json'}: {what}")
    try:
        if not isinstance(meta.get("model"), dict):
            raise ConfigError(f"model must be a JSON object, got {meta.get('model')!r}")
        cfg = TransformerConfig.from_dict(meta["model"])
    except (KeyError, TypeError, ConfigError) as err:
        raise CheckpointError(f"{step_dir / 'config.json'}: bad model config: {err}") from None
    vocabs = _read_json(step_dir / "vocab.json")
    try:
        src_vocab, tgt_vocab = Vocab.from_dict(vocabs["source"]), Vocab.from_dict(vocabs["target"])
    except (KeyError, TypeError, ConfigError) as err:
        raise CheckpointError(f"{step_dir / 'vocab.json'}: bad vocabulary: {err}") from None
    if (len(src_vocab), len(tgt_vocab)) != (cfg.src_vocab_size, cfg.tgt_vocab_size):
        raise CheckpointError(f"{step_dir}: vocab.json has {len(src_vocab)} source and {len(tgt_vocab)} "
                              f"target tokens but config.json says {cfg.src_vocab_size} and "
                              f"{cfg.tgt_vocab_size}")
    try:
        model = build_model(cfg)
    except ConfigError as err:
        raise CheckpointError(f"{step_dir}: {err}") from None
    weights = step_dir / "model.safetensors"
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    try:
        with safe_open(str(weights), framework="pt") as f:
            stored = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    except (SafetensorError, OSError) as err:
        raise CheckpointError(f"{weights} cannot be read: {err}") from None
    for key, shape in stored.items():
        if key not in expected:
            raise CheckpointError(f"{step_dir}: config.json does not match model.safetensors: the weights "
                                  f"hold {key!r}, which a model of this config does not have")
        if expected[key] != shape:
            raise CheckpointError(f"{step_dir}: config.json does not match model.safetensors: {key!r} is "
                                  f"{list(shape)} in the weights but {list(expected[key])} for the config")
    try:
        load_model(model, str(weights), strict=True)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[-1]
        raise CheckpointError(f"{step_dir}: config.json does not match model.safetensors: {first}") from None
    bad = nonfinite_tensor(model.state_dict())
    if bad is not None:
        raise CheckpointError(f"{weights}: {bad} holds NaN or infinite values; this checkpoint cannot translate "
                              f"(train again, or use an earlier checkpoint)")
    model.to(device).eval()
    return Loaded(step_dir, model, cfg, src_vocab, tgt_vocab, meta)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path} cannot be read as JSON: {err}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path} should hold a JSON object")
    return data
