"""Checkpoints: written atomically, read back with every part checked against the others.

A run directory holds step directories and a pointer to the newest complete one:

    RUN/latest                  "step-000800" (replaced atomically after the step directory exists)
    RUN/step-000800/model.safetensors   weights (tied matrices stored once)
        config.json             {"format", "version", "step", "model": {...}, "data": {...},
                                 "training": {...}, "metrics": {...},
                                 "files": {"model.safetensors": SHA-256, "vocab.json": …, "trainer.pt": …}}
        vocab.json              {"source": {"level", "tokens"}, "target": {...}}
                                (bpe: {"level", "file", "sha256", "size"}, the file beside it)
        tokenizer.json          --tokens bpe: the BPE tokenizer (tokenizer-source/-target.json unshared)
        trainer.pt              optimizer state, RNG states, counters (for --resume)
    RUN/best/                   the step of the best held-out metric so far, without trainer.pt;
                                its config.json says which ("best": {"step", "metric", "value"})

A step directory is written under a temporary name (.step-000800.tmp-PID) and renamed when
complete, then `latest` is replaced; so a crash, a full disk or Ctrl-C at any moment leaves the
previous checkpoint intact and `latest` always names a complete one. A write killed half-way
leaves its temporary directory, which the next run or --resume removes. Older step directories
beyond `keep` are removed. RUN/best is written the same way (.best.tmp-PID, then swapped in; a
swap cut short is undone by the next run).

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
from typing import Callable, Optional

import torch

from examprep.errors import ExamprepError
from examprep.fileio import atomic_write_text, refuse_special
from examprep.checkpoints.config import TransformerConfig
from examprep.checkpoints.errors import CheckpointError, ConfigError, WriteError
from examprep.train.model import build_model
from examprep.checkpoints.rundir import file_sha256, hash_problem, nonfinite_tensor, read_latest, remove_stale_temporaries
from examprep.checkpoints.stored import FILES, FORMAT, VERSION, WEIGHTS, mismatch, read, resolve  # noqa: F401  (the API)
from examprep.checkpoints.vocab import Vocab


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


def _write_text(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _write_torch(path: Path, state: dict) -> None:
    with open(path, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())


def _plain_mode(path: Path) -> None:
    """safetensors creates its file 0600: give it the mode a plain open() gives (0666 & ~umask)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_step(run_dir: Path | str, step: int, what: str, write: Callable[[Path], None], keep: int = 2) -> Path:
    """The one writer of a run's step directory (a checkpoint, a LoRA adapter): ``write`` fills a
    temporary directory (.step-N.tmp-PID), which is fsynced and renamed to step-N; then `latest` is
    replaced through fileio (never renamed over a device or a pipe: refused before anything is
    written) and the steps beyond ``keep`` are removed. Any failure removes the temporary directory
    and raises WriteError naming ``what`` and saying what is kept."""
    from safetensors import SafetensorError

    run_dir = Path(run_dir)
    name = f"step-{step:06d}"
    final, tmp = run_dir / name, run_dir / f".{name}.tmp-{os.getpid()}"
    previous = latest(run_dir)
    try:
        refuse_special(run_dir / "latest")
        run_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(run_dir)                 # ours from an earlier attempt, or a killed writer's
        tmp.mkdir()
        write(tmp)
        _fsync_dir(tmp)
        if final.exists():                                # a stale copy from an older run
            shutil.rmtree(final)
        os.replace(tmp, final)
        atomic_write_text(run_dir / "latest", name + "\n")
        _fsync_dir(run_dir)
    except (OSError, RuntimeError, SafetensorError, ExamprepError) as err:
        shutil.rmtree(tmp, ignore_errors=True)
        kept = f"the previous {what} {previous} is kept" if previous else f"no earlier {what} exists"
        raise WriteError(f"could not write {what} {final}: {_reason(err)}; {kept}") from None
    steps = sorted((p for p in run_dir.glob("step-*") if p.name[5:].isdigit()), key=lambda p: int(p.name[5:]))
    for old in steps[:-keep] if keep > 0 else []:
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return final


def latest(run_dir: Path | str) -> Optional[Path]:
    """The newest complete step directory of a run, or None if the run has none."""
    return read_latest(run_dir)[0]


def save(run_dir: Path | str, step: int, model: torch.nn.Module, source_vocab: Vocab,
         target_vocab: Vocab, meta: dict, trainer_state: Optional[dict] = None, keep: int = 2) -> Path:
    """Write step `step` of a run; returns the step directory. Raises WriteError (nothing lost)."""
    previous = latest(run_dir)
    if previous is not None and previous.name == f"step-{step:06d}":
        return previous                                   # this very state is already saved

    def write(tmp: Path) -> None:
        _write_checkpoint(tmp, step, model, source_vocab, target_vocab, meta, trainer_state)

    return write_step(run_dir, step, "checkpoint", write, keep)


def _write_checkpoint(tmp: Path, step: int, model: torch.nn.Module, source_vocab: Vocab, target_vocab: Vocab,
                      meta: dict, trainer_state: Optional[dict]) -> None:
    from safetensors.torch import save_file

    save_file(_stored_tensors(model), str(tmp / "model.safetensors"), metadata={"format": FORMAT})
    _plain_mode(tmp / "model.safetensors")
    _write_json(tmp / "vocab.json", {"source": source_vocab.to_dict(), "target": target_vocab.to_dict()})
    tokenizers = {**source_vocab.files(), **target_vocab.files()}     # a BPE vocabulary's tokenizer.json
    for name, text in tokenizers.items():
        _write_text(tmp / name, text)
    if trainer_state is not None:
        _write_torch(tmp / "trainer.pt", trainer_state)
    files = {f: file_sha256(tmp / f) for f in ("model.safetensors", "vocab.json", *sorted(tokenizers), "trainer.pt")
             if (tmp / f).exists()}
    _write_json(tmp / "config.json", {"format": FORMAT, "version": VERSION, "step": step,
                                      "model": model.cfg.to_dict(), **meta, "files": files})


BEST = "best"


def save_best(run_dir: Path | str, step: int, model: torch.nn.Module, source_vocab: Vocab, target_vocab: Vocab,
              meta: dict) -> Path:
    """Write RUN/best, a checkpoint directory (no trainer.pt: it is for translating, not resuming)
    that `translate`, `attention-map` and the other readers take as --checkpoint RUN/best. Written
    under .best.tmp-PID and swapped in; WriteError (the previous best kept) when that fails."""
    from safetensors import SafetensorError

    run_dir = Path(run_dir)
    final, tmp, old = run_dir / BEST, run_dir / f".{BEST}.tmp-{os.getpid()}", run_dir / f".{BEST}.old-{os.getpid()}"
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _write_checkpoint(tmp, step, model, source_vocab, target_vocab, meta, None)
        _fsync_dir(tmp)
        if final.exists():
            os.replace(final, old)
        os.replace(tmp, final)
        _fsync_dir(run_dir)
    except (OSError, RuntimeError, SafetensorError, ExamprepError) as err:
        shutil.rmtree(tmp, ignore_errors=True)
        restore_best(run_dir)
        raise WriteError(f"could not write the best checkpoint {final}: {_reason(err)}; the previous one is kept") \
            from None
    shutil.rmtree(old, ignore_errors=True)
    return final


def restore_best(run_dir: Path | str) -> None:
    """Undo a swap of RUN/best cut short: the previous best back in place, the leftovers removed."""
    run_dir = Path(run_dir)
    olds = sorted(run_dir.glob(f".{BEST}.old-*"))
    if olds and not (run_dir / BEST).exists():
        os.replace(olds[-1], run_dir / BEST)
        olds = olds[:-1]
    for leftover in [*olds, *run_dir.glob(f".{BEST}.tmp-*")]:
        shutil.rmtree(leftover, ignore_errors=True)


def read_best(run_dir: Path | str) -> Optional[dict]:
    """RUN/best's {"step", "metric", "value"}, or None when the run has none (or it cannot be read)."""
    restore_best(run_dir)
    try:
        best = json.loads((Path(run_dir) / BEST / "config.json").read_text(encoding="utf-8")).get("best")
    except (OSError, ValueError, AttributeError):
        return None
    return best if isinstance(best, dict) and {"step", "metric", "value"} <= set(best) else None


def _stored_tensors(model: torch.nn.Module) -> dict:
    """The state dict with each tied matrix (one tensor under several names) once, under the first of
    its names in sorted order (the name safetensors' save_model keeps, so load_model reads old and new
    files alike).

    save_model would also record every dropped name in the file's metadata, a map that safetensors
    writes in an order drawn afresh in each process: identical weights gave different bytes, hence
    different SHA-256s (issue 40). The metadata keeps one key, so the header has one order; the
    ties themselves follow from config.json's share_embeddings."""
    state = model.state_dict()
    groups: dict[tuple, list[str]] = {}
    for name, tensor in state.items():
        same = (tensor.device, tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tensor.stride())
        groups.setdefault(same, []).append(name)
    kept = sorted(min(names) for names in groups.values())
    return {name: state[name].detach().contiguous() for name in kept}


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


def load_for_resume(out: Optional[Path | str]) -> Loaded:
    """The latest checkpoint of the run --resume continues, on the CPU: ConfigError without --out,
    CheckpointError naming the problem when the run holds none that can be read."""
    if out is None:
        raise ConfigError("--resume needs --out DIR: the run to continue")
    step_dir, problem = read_latest(out)
    if step_dir is None:
        raise CheckpointError(f"--resume: {problem}" if problem else f"--resume: {out} holds no checkpoint to resume")
    return load(step_dir, "cpu")


def load(path: Path | str, device: str | torch.device = "cpu") -> Loaded:
    """Load a checkpoint (run or step directory) and check that config, vocabulary and weights fit:
    examprep.checkpoints.stored reads and checks the files, torch builds the model and loads the weights."""
    from safetensors import SafetensorError
    from safetensors.torch import load_model, safe_open

    stored = read(path)
    step_dir, meta, cfg = stored.path, stored.meta, stored.config
    problem = hash_problem(step_dir, meta, [WEIGHTS])       # before torch reads a changed file
    if problem is not None:
        raise CheckpointError(problem)
    try:
        model = build_model(cfg)
    except ConfigError as err:
        raise CheckpointError(f"{step_dir}: {err}") from None
    weights = step_dir / WEIGHTS
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    try:
        with safe_open(str(weights), framework="pt") as f:
            shapes = {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}
    except (SafetensorError, OSError) as err:
        raise CheckpointError(f"{weights} cannot be read: {err}") from None
    for key, shape in shapes.items():
        if key not in expected:
            raise mismatch(step_dir, f"the weights hold {key!r}, which a model of this config does not have")
        if expected[key] != shape:
            raise mismatch(step_dir, f"{key!r} is {list(shape)} in the weights but {list(expected[key])} for the config")
    try:
        load_model(model, str(weights), strict=True)
    except RuntimeError as err:
        first = str(err).strip().splitlines()[-1]
        raise mismatch(step_dir, first) from None
    bad = nonfinite_tensor(model.state_dict())
    if bad is not None:
        raise CheckpointError(f"{weights}: {bad} holds NaN or infinite values; this checkpoint cannot translate "
                              f"(train again, or use an earlier checkpoint)")
    model.to(device).eval()
    return Loaded(step_dir, model, cfg, stored.source_vocab, stored.target_vocab, meta)
