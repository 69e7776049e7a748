"""`examprep train`'s options checked and resolved before any work, without torch: every value's
range, the learning-rate schedule's options against one another, the run directory, and what a
resumed run keeps from its checkpoint (read from config.json here, so that the thread count is set
to the run's before torch does any work)."""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import asdict, fields, replace
from pathlib import Path

from examprep.checkpoints.errors import ConfigError
from examprep.checkpoints.vocab import TOKEN_LEVELS
from examprep.errors import check_seed
from examprep.train.options import (KEPT_ON_RESUME, KEPT_UNLESS_GIVEN, PRECISIONS, TrainOptions, check_architecture,
                                    stored_training)
from examprep.train.schedule import DECAYING, SCHEDULES

MAX_BATCH_TOKENS = 10_000_000     # beyond any one machine's memory for a step
MAX_THREADS_PER_CORE = 4          # --threads above this many per core is a typo, not a setting
MAX_GRAD_ACCUM = 4096             # micro-batches per step: more is a typo


def given_options(o: TrainOptions) -> frozenset:
    """The options the user set: those named on the command line (o.given), or for a caller's
    TrainOptions those that differ from the defaults."""
    if o.given is not None:
        return frozenset(o.given)
    default = TrainOptions()
    return frozenset(f.name for f in fields(o) if f.name != "given" and getattr(o, f.name) != getattr(default, f.name))


def merge_resumed(o: TrainOptions, saved: dict) -> TrainOptions:
    """The options of a resumed run: the model's and the data's always from the checkpoint
    (KEPT_ON_RESUME), the run controls (KEPT_UNLESS_GIVEN) from it unless given again. --steps and
    --minutes go together (either given replaces both); a schedule given again drops the stored
    --lr and --lr-factor that belonged to the old one."""
    check_kept_not_changed(o, saved)
    given = given_options(o)
    if "steps" in given or "minutes" in given:
        given |= {"steps", "minutes"}
    if "lr_schedule" in given:
        given |= {"lr", "lr_factor"}
    kept = {k: saved[k] for k in KEPT_ON_RESUME if k in saved}
    kept.update({k: saved[k] for k in KEPT_UNLESS_GIVEN if k not in given and k in saved})
    return replace(o, **kept, given=given_options(o))


def check_kept_not_changed(o: TrainOptions, saved: dict) -> None:
    """ConfigError (one line) for a model or data option named on the command line of --resume with
    another value than the run's: the run keeps its own, so the new value would be silently ignored
    (a user who resumes with --tokens word would train the run's BPE model on). Named again with the
    run's own value, it is accepted."""
    for name in KEPT_ON_RESUME:
        if o.given is None or name not in o.given or name not in saved:
            continue
        new, old = getattr(o, name), saved[name]
        if new == old or (name == "corpus" and new and old and _same_file(new, old)):
            continue
        flag = "--" + name.replace("_", "-")
        asked, trained = ((flag, f"{'with' if old else 'without'} {flag}") if isinstance(new, bool) else
                          (f"{flag} {_shown(new)}", f"with {flag} {_shown(old)}"))
        raise ConfigError(f"{asked}: the run in {o.out} was trained {trained}, and --resume keeps the model's and "
                          f"the data's options; leave {flag} out, or train a new run in another --out")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _shown(value) -> str:
    return "(its default)" if value is None else str(value)


def resume_options(o: TrainOptions) -> TrainOptions:
    """--resume: the options merged with those of the run's latest checkpoint (unchanged when there
    is none to read); otherwise `o` with what was given recorded."""
    if o.resume:
        saved = stored_training(o.out)
        if saved is not None:
            return merge_resumed(o, saved)
    return replace(o, given=given_options(o))


def diverged_advice(o: TrainOptions, precision: str) -> str:
    """What a diverged run's message suggests: a lower rate by the option its schedule takes (noam's
    --lr-factor, the others' --lr: naming the other is refused), and fp32 where it ran in less."""
    rate = "--lr-factor" if o.lr_schedule == "noam" else "--lr"
    return f"try a lower {rate}" + (" or --precision fp32" if precision != "fp32" else "")


def check_schedule(o: TrainOptions) -> None:
    """--lr-schedule with --lr, --lr-factor, --warmup and --steps: the peak rate belongs to cosine,
    linear and constant, the factor to noam, and a decaying schedule needs to know the run's end."""
    given = given_options(o)
    if o.lr_schedule not in SCHEDULES:
        raise ConfigError(f"--lr-schedule {o.lr_schedule!r} is not one of {', '.join(SCHEDULES)}")
    if o.lr_schedule == "noam":
        if o.lr is not None:
            raise ConfigError("--lr is the peak rate of --lr-schedule cosine, linear or constant; the noam schedule "
                              "(the default) is scaled by --lr-factor instead")
        if o.warmup < 1:
            raise ConfigError(f"--warmup must be at least 1 for the noam schedule, got {o.warmup}")
    else:
        if "lr_factor" in given:
            raise ConfigError(f"--lr-factor scales the noam schedule; --lr-schedule {o.lr_schedule} takes its peak "
                              f"rate as --lr")
        if o.lr is not None and not (math.isfinite(o.lr) and o.lr > 0):
            raise ConfigError(f"--lr must be a finite positive number, got {o.lr}")
        if o.warmup < 0:
            raise ConfigError(f"--warmup must be at least 0, got {o.warmup}")
    if o.lr_schedule in DECAYING:
        if o.steps is None:
            raise ConfigError(f"--lr-schedule {o.lr_schedule} decays over the whole run: give --steps "
                              f"(--minutes alone does not say when the run ends)")
        if o.warmup >= o.steps:
            raise ConfigError(f"--warmup {o.warmup} leaves nothing of --steps {o.steps} for the {o.lr_schedule} "
                              f"decay; give a smaller --warmup")


def check_options(o: TrainOptions) -> None:
    """Every option's value, before any work; ConfigError naming the first that is wrong."""
    check_architecture(o.arch, o.cell, o.attention, o.bidirectional)
    if o.task is not None and o.corpus is not None:
        raise ConfigError("give either --task or --corpus, not both")
    if o.precision not in PRECISIONS:
        raise ConfigError(f"--precision {o.precision!r} is not one of {', '.join(PRECISIONS)}")
    if o.steps is not None and o.steps < 1:
        raise ConfigError(f"--steps must be at least 1, got {o.steps}")
    if o.minutes is not None and not (math.isfinite(o.minutes) and o.minutes > 0):
        raise ConfigError(f"--minutes must be a finite positive number, got {o.minutes}")
    for name in ("batch_tokens", "eval_every", "eval_size", "grad_accum", "keep"):
        if getattr(o, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(o, name)}")
    if o.save_every is not None and o.save_every < 1:
        raise ConfigError(f"--save-every must be at least 1, got {o.save_every}")
    if o.grad_accum > MAX_GRAD_ACCUM:
        raise ConfigError(f"--grad-accum {o.grad_accum} is more than {MAX_GRAD_ACCUM} micro-batches per step")
    for name, flag in (("clip", "--clip"), ("weight_decay", "--weight-decay")):
        value = getattr(o, name)
        if not (math.isfinite(value) and value >= 0):
            raise ConfigError(f"{flag} must be a finite number at least 0{' (0: off)' if name == 'clip' else ''}, "
                              f"got {value}")
    if not 0.0 <= o.label_smoothing < 1.0:
        raise ConfigError(f"--label-smoothing must be in [0, 1), got {o.label_smoothing}")
    if not 0.0 <= o.heldout < 1.0:
        raise ConfigError(f"--heldout must be in [0, 1), got {o.heldout}")
    if o.tokens not in TOKEN_LEVELS:
        raise ConfigError(f"--tokens {o.tokens!r} is not one of {', '.join(TOKEN_LEVELS)}")
    if o.batch_tokens > MAX_BATCH_TOKENS:
        raise ConfigError(f"--batch-tokens {o.batch_tokens} is more than the {MAX_BATCH_TOKENS:,} tokens a "
                          f"step can hold in memory; use a smaller --batch-tokens")
    if not (o.lr_factor > 0 and math.isfinite(o.lr_factor)):
        raise ConfigError(f"--lr-factor must be a finite positive number, got {o.lr_factor}")
    check_schedule(o)
    if o.goal is not None and not 0.0 <= o.goal <= 1.0:
        raise ConfigError(f"--goal must be in (0, 1] (held-out exact match; 0: off), got {o.goal}")
    check_seed(o.seed)
    if o.threads is not None:
        most = MAX_THREADS_PER_CORE * (os.cpu_count() or 1)
        if o.threads < 0:
            raise ConfigError(f"--threads must be at least 0 (0: choose by load), got {o.threads}")
        if o.threads > most:
            raise ConfigError(f"--threads {o.threads} is more than {most} ({MAX_THREADS_PER_CORE} per core "
                              f"of the {os.cpu_count() or 1} here); use at most {most}, or 0 to choose by load")
    if o.out is not None:
        check_out(o.out)


def recorded(o: TrainOptions, **ran) -> dict:
    """The options as config.json records them: without the bookkeeping of what was given, with
    what ran (the precision `auto` resolved to, the thread count) in place of what was asked."""
    options = asdict(o)
    options.pop("given", None)
    return {**options, **ran}


def check_out(out: str) -> None:
    """A run directory whose path the file system cannot hold is an error before any work."""
    path = Path(out)
    for part in path.parts:
        try:
            longest = os.pathconf(existing_parent(path), "PC_NAME_MAX")
        except (OSError, ValueError):
            longest = 255
        if len(os.fsencode(part)) > longest:
            shown = part if len(part) <= 40 else part[:40] + "…"
            raise ConfigError(f"--out: the name {shown!r} is {len(os.fsencode(part))} bytes long; this file "
                              f"system allows at most {longest}: choose a shorter --out")
    try:
        path.exists()
    except OSError as err:
        raise ConfigError(f"--out {out}: {err.strerror or err}") from None


def check_writable_dir(run_dir: Path) -> None:
    """ConfigError (exit 2, as every command's unwritable output) unless files can be created in
    ``run_dir``: it is created with a probe file, and whatever this check created is removed again.
    (A directory under /proc, say, failed only when the first checkpoint was written, exit 4.)"""
    missing = [p for p in (run_dir, *run_dir.parents) if not os.path.lexists(p)]
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=run_dir)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        blocker = next((p for p in run_dir.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a directory" if blocker else (err.strerror or str(err))
        raise ConfigError(f"--out {run_dir}: cannot write a run directory there ({why})") from None
    finally:
        for p in missing:                        # deepest first
            try:
                p.rmdir()
            except OSError:
                pass


def existing_parent(path: Path) -> Path:
    for parent in [path, *path.parents]:
        try:
            if parent.exists():
                return parent
        except OSError:
            continue
    return Path(".")
