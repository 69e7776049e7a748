"""`examprep finetune`: LoRA fine-tuning of a trained sequence-to-sequence checkpoint (or, with
--full, fine-tuning of every weight, the comparison), on a built-in task or a corpus.

    finetune(FinetuneOptions(...)) -> FinetuneResult

LoRA freezes the base model and trains only the adapters of examprep.train.lora; a run directory
then holds adapters, not models:

    OUT/latest                       "step-000300"
    OUT/step-000300/adapter.safetensors   lora_A and lora_B of every adapted matrix
        adapter.json                 {"format": "examprep-lora", "version", "step", "rank", "alpha",
                                      "targets", "matrices", "base": {"path", "sha256"}, "data",
                                      "training", "metrics", "files": {name: SHA-256}}
        trainer.pt                   optimizer state, RNG state, counters (for --resume)
    OUT/merged/                      with --merge: a plain checkpoint, W₀ + (α/r)·B A written in

written atomically as the trainer's checkpoints are. The adapter names its base model by the
SHA-256 of the base's weights: resuming (or merging) on other weights is an error. --full writes
the trainer's ordinary checkpoints.

Schedule: AdamW (β = 0.9, 0.999, no weight decay), linear warm-up for --warmup steps, then the
constant --lr. Evaluation, the goal and stopping are the trainer's (held-out exact match).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import torch

from examprep.errors import check_seed
from examprep.checkpoints import stored
from examprep.train import checkpoint
from examprep.train.checkpoint import _plain_mode, _write_json, _write_torch, write_step
from examprep.checkpoints.config import TransformerConfig
from examprep.train.data import collate, get_task
from examprep.train.distributed import setup, teardown
from examprep.checkpoints.errors import CheckpointError, ConfigError, DivergedError
from examprep.train.evaluate import evaluate
from examprep.train.lora import Adapted, add_adapters, check_rank, merge, parse_targets
from examprep.train.options import FinetuneOptions, TrainOptions
from examprep.train.report import Reporter, describe_metrics
from examprep.train.runlog import RunLog, check_tensorboard, eval_record, step_record
from examprep.checkpoints.rundir import file_sha256, hash_problem, read_latest, remove_stale_temporaries
from examprep.train.trainer import (_StopSignal, _build_data, _check_writable_dir, _rng_state, _set_rng_state,
                                    smoothed_cross_entropy, stop_reason)

ADAPTER_FORMAT, ADAPTER_VERSION = "examprep-lora", 1
ADAPTER, ADAPTER_JSON = "adapter.safetensors", "adapter.json"


@dataclass
class Plan:
    """What the options ask for, checked before any work."""

    base: stored.Stored
    base_sha256: str
    targets: tuple[str, ...]
    alpha: Optional[float]
    lr: float
    task: Optional[str]
    corpus: Optional[str]
    swap: bool
    run_dir: Path


@dataclass
class FinetuneResult:
    run_dir: Path
    checkpoint: Optional[Path]
    merged: Optional[Path]
    steps: int
    first_step: int
    losses: list[float]
    evals: list[dict]
    train_seconds: float
    stopped: str
    trainable: int                       # parameters trained
    full: int                            # LoRA: full fine-tuning of the adapted matrices; --full: = trainable
    total: int                           # the base model's parameters
    matrices: int                        # adapted matrices (LoRA)
    optimizer_bytes: int                 # AdamW's state, measured
    goal: Optional[float] = None
    goal_step: Optional[int] = None
    goal_seconds: Optional[float] = None
    describe: list[str] = field(default_factory=list)


def plan(o: FinetuneOptions) -> Plan:
    """Every check that needs no model: ConfigError or CheckpointError, one line, before any work."""
    if o.full and o.rank is not None:
        raise ConfigError("give either --lora-rank R (LoRA) or --full (every weight), not both")
    if not o.full and o.rank is None:
        raise ConfigError("--lora-rank R is required (or --full to fine-tune every weight)")
    targets = parse_targets(o.targets) if not o.full else ()
    if o.alpha is not None and not (o.alpha > 0 and math.isfinite(o.alpha)):
        raise ConfigError(f"--lora-alpha must be a finite positive number, got {o.alpha}")
    if o.task is not None and o.corpus is not None:
        raise ConfigError("give either --task or --corpus, not both")
    for name in ("batch_tokens", "eval_every", "eval_size"):
        if getattr(o, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(o, name)}")
    if o.warmup < 0:
        raise ConfigError(f"--warmup must be at least 0, got {o.warmup}")
    check_seed(o.seed)
    if o.steps is not None and o.steps < 1:
        raise ConfigError(f"--steps must be at least 1, got {o.steps}")
    if o.minutes is not None and not (math.isfinite(o.minutes) and o.minutes > 0):
        raise ConfigError(f"--minutes must be a finite positive number, got {o.minutes}")
    if o.goal is not None and not 0.0 <= o.goal <= 1.0:
        raise ConfigError(f"--goal must be in (0, 1] (held-out exact match; 0: off), got {o.goal}")
    lr = o.lr if o.lr is not None else (1e-3 if o.full else 3e-3)
    if not (lr > 0 and math.isfinite(lr)):
        raise ConfigError(f"--lr must be a finite positive number, got {lr}")
    base = stored.read(o.checkpoint)
    cfg = base.config
    if cfg.arch == "encoder-only":
        raise CheckpointError(f"{base.path} is an encoder-only masked LM; finetune adapts a sequence-to-sequence "
                              f"model (encoder-decoder or decoder-only) on a task or corpus")
    if cfg.arch == "rnn-seq2seq":
        raise CheckpointError(f"{base.path} is an RNN encoder-decoder; finetune adapts the Transformer's attention "
                              f"projections (encoder-decoder or decoder-only checkpoints)")
    if not o.full:
        check_rank(o.rank, cfg.d_model)
    problem = hash_problem(base.path, base.meta, [stored.WEIGHTS])
    if problem is not None:
        raise CheckpointError(problem)
    data = base.data
    task, corpus = o.task, o.corpus
    if task is None and corpus is None:
        task, corpus = (data.get("task") or "dates", None) if data.get("kind") != "corpus" else (None, data.get("corpus"))
    swap = bool(data.get("swap")) if o.swap is None else o.swap
    if task is not None:
        t = get_task(task)
        lacking = sorted(set(t.alphabet) - set(base.source_vocab.tokens) - set(base.target_vocab.tokens))
        if base.source_vocab.level != "char" or lacking:
            raise ConfigError(f"task {task} writes characters that {base.path}'s vocabulary lacks "
                              f"({''.join(lacking[:10]) or base.source_vocab.level + ' tokens'}); fine-tune a model "
                              f"trained on a built-in task")
    if o.out is None:
        raise ConfigError("--out DIR is required: where the adapter (or the fine-tuned model) is written")
    run_dir = Path(o.out)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--out {run_dir} is a file; give a directory")
    if run_dir.resolve() == base.path.resolve() or base.path.resolve() in run_dir.resolve().parents \
            or run_dir.resolve() in base.path.resolve().parents:
        raise ConfigError(f"--out {run_dir} is the base checkpoint's directory; choose another")
    if not o.resume and read_latest(run_dir)[0] is not None:
        raise ConfigError(f"{run_dir} already holds a checkpoint; add --resume to continue it or choose another --out")
    return Plan(base, file_sha256(base.path / stored.WEIGHTS), targets, o.alpha if o.alpha is not None else
                (float(o.rank) if o.rank else None), lr, task, corpus, swap, run_dir)


# ------------------------------------------------------------------ adapter files

def save_adapter(run_dir: Path, step: int, adapted: Adapted, info: dict, trainer_state: Optional[dict],
                 keep: int = 2) -> Path:
    """Write OUT/step-N (adapter, its JSON, optimizer state) atomically, then point `latest` at it."""
    from safetensors.torch import save_file

    def write(tmp: Path) -> None:
        save_file({k: v.cpu() for k, v in adapted.state_dict().items()}, str(tmp / ADAPTER),
                  metadata={"format": ADAPTER_FORMAT})
        _plain_mode(tmp / ADAPTER)
        if trainer_state is not None:
            _write_torch(tmp / "trainer.pt", trainer_state)
        files = {f: file_sha256(tmp / f) for f in (ADAPTER, "trainer.pt") if (tmp / f).exists()}
        _write_json(tmp / ADAPTER_JSON, {"format": ADAPTER_FORMAT, "version": ADAPTER_VERSION, "step": step,
                                         "rank": adapted.rank, "alpha": adapted.alpha,
                                         "targets": list(adapted.targets), "matrices": adapted.count,
                                         **info, "files": files})

    return write_step(run_dir, step, "adapter", write, keep)


def read_adapter(path: Path | str) -> tuple[Path, dict, dict]:
    """(step directory, adapter.json, tensors) of an adapter run or step directory, every file
    checked against its recorded SHA-256. CheckpointError naming the file otherwise."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(path)
    step_dir = path if (path / ADAPTER_JSON).is_file() else read_latest(path)[0]
    if step_dir is None or not (step_dir / ADAPTER_JSON).is_file():
        raise CheckpointError(f"{path} holds no LoRA adapter (no {ADAPTER_JSON}); write one with examprep finetune")
    meta = stored.read_json(step_dir / ADAPTER_JSON)
    if meta.get("format") != ADAPTER_FORMAT:
        raise CheckpointError(f"{step_dir / ADAPTER_JSON} is not an examprep adapter (format {meta.get('format')!r})")
    if not isinstance(meta.get("version"), int) or meta["version"] > ADAPTER_VERSION:
        raise CheckpointError(f"{step_dir / ADAPTER_JSON} is adapter version {meta.get('version')!r}; this examprep "
                              f"reads version {ADAPTER_VERSION}")
    _check_adapter_meta(meta, step_dir / ADAPTER_JSON)
    problem = hash_problem(step_dir, meta)
    if problem is not None:
        raise CheckpointError(problem)
    try:
        tensors = load_file(str(step_dir / ADAPTER))
    except (SafetensorError, OSError) as err:
        raise CheckpointError(f"{step_dir / ADAPTER} cannot be read: {err}") from None
    return step_dir, meta, tensors


def _check_adapter_meta(meta: dict, where: Path) -> None:
    """adapter.json's rank, alpha and targets (the file holds the other files' checksums, not its
    own): CheckpointError naming the file and the field."""
    rank, alpha, targets = meta.get("rank"), meta.get("alpha"), meta.get("targets")
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        raise CheckpointError(f"{where}: rank must be a whole number of at least 1, got {rank!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not (math.isfinite(alpha) and alpha > 0):
        raise CheckpointError(f"{where}: alpha must be a positive number, got {alpha!r}")
    if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
        raise CheckpointError(f"{where}: targets must be a list of projections such as [\"q\", \"v\"], got {targets!r}")


def apply_adapter(model: torch.nn.Module, meta: dict, tensors: dict, where: Path) -> Adapted:
    """Add the adapters adapter.json describes to model and load their values."""
    try:
        adapted = add_adapters(model, int(meta["rank"]), float(meta["alpha"]), parse_targets(",".join(meta["targets"])))
        adapted.load_state_dict(tensors)
    except (KeyError, TypeError, ValueError, RuntimeError, ConfigError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise CheckpointError(f"{where}: the adapter does not fit this model: {first}") from None
    return adapted


def is_adapter(path: Path | str) -> bool:
    """Whether path is an adapter run or step directory of `examprep finetune` (not a checkpoint)."""
    path = Path(path)
    if (path / ADAPTER_JSON).is_file():
        return True
    step_dir = read_latest(path)[0] if path.is_dir() else None
    return step_dir is not None and (step_dir / ADAPTER_JSON).is_file()


def load_adapted(path: Path | str, device: str | torch.device = "cpu") -> checkpoint.Loaded:
    """The base model an adapter names, with the adapter added (not merged), as a checkpoint.Loaded;
    CheckpointError if the base is gone or its weights are not those the adapter was trained on."""
    step_dir, meta, tensors = read_adapter(path)
    base = meta.get("base", {})
    base_path = Path(str(base.get("path", "")))
    if not (base_path / stored.WEIGHTS).is_file():
        raise CheckpointError(f"{step_dir / ADAPTER_JSON} names the base model {base_path}, which is gone; "
                              f"merge the adapter where the base is (finetune --merge)")
    if file_sha256(base_path / stored.WEIGHTS) != base.get("sha256"):
        raise CheckpointError(f"the base model {base_path} changed after the adapter in {step_dir} was trained on it")
    loaded = checkpoint.load(base_path, device)
    apply_adapter(loaded.model, meta, tensors, step_dir)
    loaded.model.eval()
    return checkpoint.Loaded(step_dir, loaded.model, loaded.config, loaded.source_vocab, loaded.target_vocab,
                             {**loaded.meta, "data": {**loaded.data, **meta.get("data", {})}})


# ------------------------------------------------------------------ the run

def _check_resumed_kind(step_dir: Path, run_dir: Path, full: bool) -> None:
    """--resume with the run's own kind: --full on a LoRA run (an adapter in its step directory) or
    LoRA on a --full run (a whole model there) is one line saying which the run is."""
    adapter = (step_dir / ADAPTER_JSON).is_file()
    if full and adapter:
        raise ConfigError(f"--resume --full: {run_dir} is a LoRA run ({step_dir.name} holds an adapter); resume it "
                          f"without --full, or fine-tune every weight into another --out")
    if not full and not adapter and (step_dir / "config.json").is_file():
        raise ConfigError(f"--resume: {run_dir} is a --full run ({step_dir.name} holds a whole model); add --full, or "
                          f"train an adapter into another --out")


def _data(p: Plan, o: FinetuneOptions, cfg: TransformerConfig, d):
    t = TrainOptions(task=p.task, corpus=p.corpus, swap=p.swap, tokens=p.base.source_vocab.level,
                     heldout=o.heldout, eval_size=o.eval_size, arch=cfg.arch, max_len=cfg.max_len,
                     share=cfg.share_embeddings, batch_tokens=o.batch_tokens, seed=o.seed)
    return _build_data(t, d, (p.base.source_vocab, p.base.target_vocab))


def optimizer_bytes(opt: torch.optim.Optimizer) -> int:
    """Bytes of every tensor in the optimizer's state (AdamW: exp_avg and exp_avg_sq, and step)."""
    return sum(v.numel() * v.element_size() for s in opt.state.values() for v in s.values()
               if isinstance(v, torch.Tensor))


def finetune(o: FinetuneOptions, reporter: Optional[Reporter] = None) -> FinetuneResult:
    """Fine-tune as `o` says; raises TrainError subclasses for user errors (before any work for
    everything that needs no model)."""
    p = plan(o)
    if o.tensorboard:
        check_tensorboard()
    reporter = reporter or Reporter()
    d = setup(o.device, o.threads)
    try:
        if d.enabled:
            raise ConfigError("finetune runs in one process; start it without torchrun")
        _check_writable_dir(p.run_dir)
        remove_stale_temporaries(p.run_dir)
        state, adapted, start_dir = None, None, None
        if o.resume:
            start_dir = read_latest(p.run_dir)[0]
            if start_dir is None:
                raise CheckpointError(f"--resume: {p.run_dir} holds nothing to resume")
            _check_resumed_kind(start_dir, p.run_dir, o.full)
        if o.full:
            loaded = checkpoint.load(start_dir or p.base.path, d.device)
            if start_dir is not None:
                state = loaded.trainer_state()
            model = loaded.model
            params = list(model.parameters())
        else:
            model = checkpoint.load(p.base.path, d.device).model
            if start_dir is not None:
                step_dir, meta, tensors = read_adapter(start_dir)
                if meta.get("base", {}).get("sha256") != p.base_sha256:
                    raise CheckpointError(f"--resume: the adapter in {p.run_dir} was trained on other weights than "
                                          f"{p.base.path} (SHA-256 {p.base_sha256[:12]}…); give its base checkpoint")
                if (meta.get("rank"), list(meta.get("targets", []))) != (o.rank, list(p.targets)):
                    raise ConfigError(f"--resume: the adapter in {p.run_dir} has rank {meta.get('rank')} on "
                                      f"{','.join(meta.get('targets', []))}; give the same --lora-rank and --targets")
                adapted = apply_adapter(model, meta, tensors, step_dir)
                state = torch.load(step_dir / "trainer.pt", map_location="cpu", weights_only=True)
            else:
                torch.manual_seed(o.seed)
                adapted = add_adapters(model, o.rank, p.alpha, p.targets)
            params = list(adapted.parameters())
        cfg = p.base.config
        data = _data(p, o, cfg, d)
        for note in data.notes:
            reporter.note(note)
        total = _base_total(model)
        trainable = sum(q.numel() for q in params)
        result_full = adapted.full if adapted else trainable
        model.train()
        opt = torch.optim.AdamW(params, lr=p.lr, betas=(0.9, 0.999), weight_decay=0.0)
        step = 0
        if state is not None:
            opt.load_state_dict(state["optimizer"])
            step = int(state["step"])
            _set_rng_state(state["rng"], d.device)
        if o.steps is not None and step >= o.steps:
            raise ConfigError(f"the run is at step {step}; give --steps above it to train on")
        first_step = step + 1
        goal = o.goal if o.goal is not None else (None if data.is_corpus else 0.995)
        goal = goal or None
        seconds_total = o.minutes * 60 if o.minutes else (None if o.steps else 60.0)
        if adapted is not None:
            reporter.note(f"LoRA: {trainable:,} trainable parameters in {adapted.count} adapted matrices, "
                          f"{adapted.full:,} in those matrices, {total:,} in the model")
        what = "full fine-tuning" if o.full else f"LoRA rank {o.rank}, α {p.alpha:g}, on {','.join(p.targets)}"
        reporter.start(f"{what}: task {p.task}" if p.task else f"{what}: corpus {Path(p.corpus).name}",
                       o.steps, seconds_total, step)
        losses, evals, train_seconds, last, opt_bytes = [], [], 0.0, start_dir, 0
        stopped = goal_step = goal_seconds = None
        info = {"base": {"path": str(p.base.path.resolve()), "sha256": p.base_sha256},
                "data": {"kind": "corpus" if p.corpus else "task", "task": p.task,
                         "corpus": str(Path(p.corpus).resolve()) if p.corpus else None, "swap": p.swap,
                         "max_target_tokens": data.max_target_tokens},
                "training": asdict(o)}
        # RUN/log.jsonl, as `train` writes it (examprep.train.runlog); the loss here is unsmoothed: loss = nll
        log = RunLog(p.run_dir, step if state is not None else None, o.tensorboard)
        try:
            with _StopSignal() as stop:
                while stopped is None:
                    step += 1
                    t0 = time.perf_counter()
                    lr = p.lr * min(1.0, step / o.warmup) if o.warmup else p.lr
                    for group in opt.param_groups:
                        group["lr"] = lr
                    batch = collate(data.stream.examples(step)).to(d.device)
                    logits = model(batch.src, batch.inp, src_padded=batch.src_padded) \
                        if cfg.arch == "encoder-decoder" else model(batch.inp)
                    loss_sum = smoothed_cross_entropy(logits, batch.out, 0.0)
                    (loss_sum / batch.global_targets).backward()
                    torch.nn.utils.clip_grad_norm_(params, 1.0)
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    opt_bytes = optimizer_bytes(opt)
                    loss = float(loss_sum.detach()) / batch.global_targets
                    if not math.isfinite(loss):
                        raise DivergedError(f"the loss became {loss} at step {step}; stopped without saving "
                                            f"(the last good one, {last or 'none yet'}, is kept); try a lower --lr")
                    elapsed = time.perf_counter() - t0
                    train_seconds += elapsed
                    losses.append(loss)
                    log.write([step_record(step, loss, loss, lr, batch.global_tokens / max(elapsed, 1e-9))])
                    reporter.step(step, train_seconds, loss, batch.global_tokens / max(elapsed, 1e-9), None, lr)
                    stopped = stop_reason(stop.requested, step, o.steps, train_seconds, seconds_total)
                    metrics = None
                    if step % o.eval_every == 0 or stopped in ("steps", "time"):
                        metrics = {**evaluate(model, data.heldout, data.source_vocab, data.target_vocab,
                                              max_new_tokens=data.max_target_tokens, bleu=data.is_corpus),
                                   "split": data.split}
                        evals.append({"step": step, "train_seconds": train_seconds, **metrics})
                        log.write([eval_record(step, train_seconds, metrics, "bleu" if data.is_corpus else "exact_match")])
                        reporter.evaluation(step, train_seconds, metrics)
                        if goal is not None and goal_step is None and metrics["exact_match"] >= goal:
                            goal_step, goal_seconds, stopped = step, train_seconds, stopped or "goal"
                    if step % o.eval_every == 0 or stopped:
                        tstate = {"step": step, "optimizer": opt.state_dict(), "rng": _rng_state(d.device)}
                        if o.full:
                            meta = {"data": info["data"], "training": {"finetuned_from": info["base"], **asdict(o)},
                                    "metrics": metrics or {}}
                            last = checkpoint.save(p.run_dir, step, model, data.source_vocab, data.target_vocab,
                                                   meta, tstate)
                        else:
                            last = save_adapter(p.run_dir, step, adapted, {**info, "metrics": metrics or {}}, tstate)
        finally:
            reporter.close()
            log.close()
        merged = None
        if o.merge and not o.full:
            merged = _write_merged(model, p, data, step, info, evals[-1] if evals else {})
        return FinetuneResult(p.run_dir, last, merged, step, first_step, losses, evals, train_seconds, stopped,
                              trainable, result_full, total, adapted.count if adapted else 0, opt_bytes,
                              goal, goal_step, goal_seconds)
    finally:
        teardown(d)


def _base_total(model: torch.nn.Module) -> int:
    """The base model's parameters (tied matrices once), the adapters not counted."""
    seen = {}
    for name, t in model.named_parameters():
        if "lora_" not in name:
            seen[id(t)] = t.numel()
    return sum(seen.values())


def _write_merged(model, p: Plan, data, step: int, info: dict, metrics: dict) -> Path:
    merge(model)
    meta = {"data": info["data"], "training": {"merged_from": {"base": info["base"], "adapter": str(p.run_dir)}},
            "metrics": metrics}
    return checkpoint.save(p.run_dir / "merged", step, model, data.source_vocab, data.target_vocab, meta)


def summary(r: FinetuneResult, o: FinetuneOptions) -> str:
    why = {"steps": "reached --steps", "time": "used its time", "goal": "reached the goal",
           "interrupted": "interrupted"}[r.stopped]

    lines = [f"stopped at step {r.steps:,} ({why}) after {r.train_seconds:.1f} s of training"]
    if r.evals:
        lines.append(f"held-out at step {r.evals[-1]['step']:,}: {describe_metrics(r.evals[-1])}")
    if r.goal is not None:
        lines.append(f"goal {100 * r.goal:.1f}% exact match " + (f"reached at step {r.goal_step:,} after "
                     f"{r.goal_seconds:.1f} s" if r.goal_step else "not reached"))
    if r.checkpoint is not None:
        lines.append(f"{'checkpoint' if o.full else 'adapter'}: {r.checkpoint}")
    if r.merged is not None:
        lines.append(f"merged model: {r.merged}")
        lines.append(f"try it: examprep translate --checkpoint {r.run_dir / 'merged'} \"...\"")
    elif r.checkpoint is not None:
        lines.append(f"try it: examprep translate --checkpoint {r.run_dir} \"...\"")
    return "\n".join(lines)


def describe_counts(r: FinetuneResult, o: FinetuneOptions, d_model: int) -> str:
    """The parameter counts, as `examprep solve lora` states them, and the optimizer's memory."""
    if o.full:
        return (f"trainable parameters: {r.trainable:,} (every weight of the model)\n"
                f"AdamW state: {r.optimizer_bytes:,} bytes ({r.optimizer_bytes / 2 ** 20:.2f} MiB), measured")
    return (f"trainable parameters: {r.trainable:,} = {r.matrices} matrices × r(d + k) = {r.matrices} × {o.rank}·"
            f"({d_model} + {d_model})\nfull fine-tuning of those matrices: {r.full:,} = {r.matrices} × d·k; "
            f"the model: {r.total:,} ({100 * r.trainable / r.total:.2f}% trained)\n"
            f"AdamW state: {r.optimizer_bytes:,} bytes, measured (full fine-tuning: about {8 * r.total:,} "
            f"bytes, two fp32 moments of every weight)")


__all__ = ["FinetuneResult", "Plan", "apply_adapter", "describe_counts", "finetune", "is_adapter", "load_adapted",
           "plan", "read_adapter", "save_adapter", "summary"]
