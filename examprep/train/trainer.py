"""The training loop: AdamW, the paper's warm-up schedule, label smoothing, clipping, bf16 autocast,
optional torch.compile, periodic evaluation, atomic checkpoints, DDP under torchrun.

    train(TrainOptions(...)) -> TrainResult

Loss: cross-entropy with label smoothing ε as PyTorch defines it (ε/C to every one of the C classes,
1-ε more to the target), summed over the taught positions of the *global* batch and divided by
their count. Under DDP each process divides its sum by the global count times the number of
processes, because DDP averages gradients: the update is then the same as one process taking the
whole batch.

Learning rate: --lr-schedule noam (paper §5.3, the default), cosine, linear or constant
(examprep.train.schedule). --grad-accum N computes each step's batch in N micro-batches whose loss
sums are all divided by the step's taught positions: the same update as the whole batch at once.

Stopping: --steps (total, counted across resumes), --minutes (of training in this session,
evaluation and compiling excluded), --goal (held-out exact match), Ctrl-C/SIGTERM (saves, then stops), or a
non-finite loss (stops without saving; the last good checkpoint stays).
"""
from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, Optional

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from examprep.train import checkpoint
from examprep.train.data import (
    PAD, CorpusStream, TaskStream, Vocab, collate, corpus_vocabs, get_task, make_example, read_corpus,
    split_heldout, task_vocab,
)
from examprep.train.distributed import Dist, setup, teardown
from examprep.checkpoints.errors import ConfigError, DeviceError, DivergedError
from examprep.train.evaluate import evaluate
from examprep.train.flops import flops_per_step, peak_flops
from examprep.checkpoints.config import TransformerConfig
from examprep.train.model import build_model
from examprep.train.controls import check_options as _check_options, check_writable_dir as _check_writable_dir
from examprep.train.controls import diverged_advice, merge_resumed, recorded, resume_options
from examprep.train.options import TrainOptions
from examprep.train.report import Reporter
from examprep.train.precision import (bf16_slower_note, check_precision_device, compiled_graphs, make_scaler,
                                     optimizer_step)
from examprep.train.runlog import RunLog, eval_record, step_record
from examprep.train.schedule import lr_at, noam_lr  # noqa: F401  (noam_lr: the API)


@dataclass
class TrainResult:
    run_dir: Path
    checkpoint: Optional[Path]
    first_step: int                    # losses[i] is the loss of step first_step + i
    steps: int                         # the last step taken
    losses: list[float]
    evals: list[dict]                  # {"step", "train_seconds", **metrics}
    train_seconds: float               # this session, evaluation and saving excluded
    wall_seconds: float
    tokens_per_second: float
    stopped: str                       # "steps", "time", "goal", "interrupted"
    goal: Optional[float] = None
    goal_step: Optional[int] = None
    goal_seconds: Optional[float] = None
    is_main: bool = True               # False on the other processes of a torchrun job
    compile_seconds: float = 0.0       # steps that compiled (torch.compile), apart from train_seconds
    best: Optional[dict] = None        # RUN/best: {"step", "metric", "value"}


def smoothed_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Sum over taught positions (targets != PAD) of PyTorch's label-smoothed cross-entropy."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1),
                           ignore_index=PAD, label_smoothing=smoothing, reduction="sum")


def stop_reason(interrupted: bool, step: int, steps: Optional[int], train_seconds: float,
                seconds_total: Optional[float]) -> Optional[str]:
    """Why a run stops after this step: "interrupted" (Ctrl-C), "steps" (--steps reached), "time"
    (--minutes used), or None to go on."""
    if interrupted:
        return "interrupted"
    if steps is not None and step >= steps:
        return "steps"
    if seconds_total is not None and train_seconds >= seconds_total:
        return "time"
    return None


class _StopSignal:
    """Ctrl-C or SIGTERM asks the loop to stop at the next step boundary; a second Ctrl-C aborts."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False


@dataclass
class _Data:
    stream: object
    heldout: list
    source_vocab: Vocab
    target_vocab: Vocab
    max_target_tokens: int
    is_corpus: bool
    notes: list = field(default_factory=list)
    split: str = "held-out"            # what `heldout` holds: "held-out" pairs, or the "training" pairs


def _build_data(o: TrainOptions, d: Dist, vocabs: Optional[tuple[Vocab, Vocab]]) -> _Data:
    joint = o.arch == "decoder-only" or o.share == "all"
    if o.corpus is None:
        task = get_task(o.task or "dates", o.lengths)
        vocab = vocabs[0] if vocabs else task_vocab(task)
        stream = TaskStream(task, vocab, o.arch, o.batch_tokens, o.seed)
        if stream.batch_size < d.world * o.grad_accum:
            parts = f"the {d.world} processes" if o.grad_accum == 1 else \
                f"the {d.world * o.grad_accum} micro-batches of {d.world} process(es) × --grad-accum {o.grad_accum}"
            raise ConfigError(f"--batch-tokens {o.batch_tokens} gives {stream.batch_size} examples per "
                              f"step, fewer than {parts}")
        return _Data(stream, task.heldout_pairs(o.eval_size, o.seed), vocab, vocab,
                     task.max_target_chars + 1, False)
    corpus = read_corpus(o.corpus, swap=o.swap)
    notes = [corpus.describe_skipped()] if corpus.describe_skipped() else []
    train_pairs, heldout = split_heldout(corpus.pairs, round(1000 * o.heldout))
    if not train_pairs:
        raise ConfigError(f"--heldout {o.heldout} leaves no training pairs in {o.corpus}")
    split = "held-out"
    if not heldout:
        heldout, split = train_pairs, "training"     # --heldout 0: evaluate on the training pairs
        notes.append("no held-out pairs: evaluating on the training pairs")
    src_vocab, tgt_vocab = vocabs or corpus_vocabs(train_pairs, o.tokens, joint=joint, min_count=o.min_count,
                                                   bpe_vocab=o.bpe_vocab)
    examples, too_long = [], 0
    for s, t in train_pairs:
        e = make_example(src_vocab.encode(s), tgt_vocab.encode(t), o.arch)
        if max(len(e.src), len(e.inp)) > o.max_len:
            too_long += 1
        else:
            examples.append(e)
    if too_long:
        notes.append(f"left out {too_long} training pair(s) longer than --max-len {o.max_len} tokens")
    stream = CorpusStream(examples, o.batch_tokens, o.seed, min_examples=d.world * o.grad_accum)
    longest = max(sum(1 for x in e.out if x != PAD) for e in examples)
    return _Data(stream, heldout, src_vocab, tgt_vocab, longest + 8, True, notes, split)


def _model_config(o: TrainOptions, data: _Data) -> TransformerConfig:
    return TransformerConfig(
        arch=o.arch, src_vocab_size=len(data.source_vocab), tgt_vocab_size=len(data.target_vocab),
        d_model=o.d_model, n_heads=o.heads, d_ff=o.d_ff, n_encoder_layers=o.layers,
        n_decoder_layers=o.layers, dropout=o.dropout if o.dropout is not None else (0.1 if o.corpus else 0.0),
        norm=o.norm, final_norm=o.final_norm,
        positions=o.positions, max_len=o.max_len, share_embeddings=o.share, activation=o.activation,
        pad_id=PAD, cell=o.cell or "gru", attention=o.attention or "additive", bidirectional=o.bidirectional)


def _autocast(device: torch.device, precision: str):
    if precision in ("bf16", "fp16"):
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16 if precision == "bf16" else torch.float16)
    return contextlib.nullcontext()


def _resolve_precision(choice: str, device: torch.device) -> str:
    check_precision_device(choice, device)
    if choice == "auto":
        return "bf16" if device.type == "cuda" and torch.cuda.is_bf16_supported() else "fp32"
    if choice == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        raise DeviceError(f"--precision bf16: {torch.cuda.get_device_name()} has no bf16; use fp32")
    return choice


def _default_out(o: TrainOptions) -> Path:
    name = Path(o.corpus).stem if o.corpus else (o.task or "dates")
    return Path("runs") / f"{name}-{datetime.now():%Y%m%d-%H%M%S}"


def _rng_state(device: torch.device) -> dict:
    state = {"torch": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict, device: torch.device) -> None:
    torch.set_rng_state(state["torch"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def open_run(o: TrainOptions) -> tuple[TrainOptions, Optional[checkpoint.Loaded], Path]:
    """(options, the checkpoint --resume continues or None, run dir); --out: no checkpoint unless --resume, no file."""
    resumed = None
    if o.resume:
        resumed = checkpoint.load_for_resume(o.out)
        o = merge_resumed(o, resumed.meta.get("training", {}))     # as resume_options did, before torch's set-up
    elif o.out is not None and checkpoint.latest(o.out) is not None:
        raise ConfigError(f"{o.out} already holds a checkpoint; add --resume to continue it or choose another --out")
    run_dir = Path(o.out) if o.out else _default_out(o)
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(f"--out {run_dir} is a file; give a directory")
    return o, resumed, run_dir


def train(options: TrainOptions, reporter: Optional[Reporter] = None,
          on_step: Optional[Callable[[int, torch.nn.Module], None]] = None) -> TrainResult:
    """Train as `options` say; returns what happened. on_step(step, model) runs after every
    optimizer step (tests use it to interfere). Raises TrainError subclasses for user errors."""
    options = resume_options(options)        # --resume: the run's own options, its thread count among them
    _check_options(options)
    d = setup(options.device, options.threads)
    try:
        return _Run(options, d, reporter or Reporter(), on_step).run()
    finally:
        teardown(d)


class _Run:
    def __init__(self, o: TrainOptions, d: Dist, reporter: Reporter, on_step):
        self.d, self.on_step = d, on_step
        self.reporter = reporter if d.main else Reporter()
        self.precision = _resolve_precision(o.precision, d.device)
        self.state: Optional[dict] = None
        o, resumed, self.run_dir = open_run(o)
        if resumed:
            self.state = resumed.trainer_state()
        self.o = o
        if d.main:
            _check_writable_dir(self.run_dir)                   # before any work, like every other --out
            checkpoint.remove_stale_temporaries(self.run_dir)    # what a killed checkpoint write left
        vocabs = (resumed.source_vocab, resumed.target_vocab) if resumed else None
        self.data = _build_data(o, d, vocabs)
        for note in self.data.notes:
            self.reporter.note(note)
        if d.device.type == "cpu":
            self.reporter.note(f"training on the CPU with {torch.get_num_threads()} thread(s)"
                               + (f" in each of {d.world} processes" if d.enabled else ""))
        slower = bf16_slower_note(self.precision, d.device)
        if slower:
            self.reporter.note(slower)
        self.scaler = make_scaler(self.precision, d.device)
        self.ddp, self.compile_seconds = None, 0.0
        self.best = checkpoint.read_best(self.run_dir) if resumed else None
        if resumed:
            self.cfg = resumed.config
            self.model = resumed.model
        else:
            self.cfg = _model_config(o, self.data)
            torch.manual_seed(o.seed)
            self.model = build_model(self.cfg)
        try:
            self.model.to(d.device).train()
        except RuntimeError as err:                       # CUDA out of memory
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise ConfigError(f"the model (about {self.cfg.parameter_estimate():.2g} parameters) does not "
                              f"fit on {d.device}: {first}") from None
        self.goal = o.goal if o.goal is not None else (None if self.data.is_corpus else 0.995)
        if self.goal == 0:
            self.goal = None

    # ------------------------------------------------------------------ pieces

    def _optimizer(self) -> torch.optim.Optimizer:
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": self.o.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        extra = {"fused": True} if self.d.device.type == "cuda" else {}
        return torch.optim.AdamW(groups, lr=0.0, betas=(0.9, 0.98), eps=1e-9, **extra)

    def _meta(self, metrics: Optional[dict]) -> dict:
        o = self.o
        data = {"kind": "corpus" if self.data.is_corpus else "task",
                "task": None if self.data.is_corpus else (o.task or "dates"),
                "corpus": str(Path(o.corpus).resolve()) if o.corpus else None,
                "swap": o.swap, "max_target_tokens": self.data.max_target_tokens}
        # What ran: the precision `auto` resolved to (issue 40: config.json recorded what was asked),
        # the thread count (a resumed run takes it again: the weights depend on it).
        threads = torch.get_num_threads() if self.d.device.type == "cpu" else o.threads
        return {"data": data, "training": recorded(o, precision=self.precision, threads=threads),
                "metrics": metrics or {}, "compile_seconds": round(self.compile_seconds, 3),
                **({"best": self.best} if self.best else {})}

    def _save(self, step: int, metrics: Optional[dict] = None) -> Path:
        for p in self.model.parameters():
            if not bool(torch.isfinite(p).all()):
                raise DivergedError(f"the weights hold NaN or inf at step {step}; nothing saved, the last "
                                    f"good checkpoint {self.last_checkpoint or '(none yet)'} is kept; "
                                    f"{diverged_advice(self.o, self.precision)}")
        state = {"step": step, "optimizer": self.optimizer.state_dict(), "rng": _rng_state(self.d.device),
                 "tokens_seen": self.tokens_seen, **({"scaler": self.scaler.state_dict()} if self.scaler else {})}
        self.last_checkpoint = checkpoint.save(self.run_dir, step, self.model, self.data.source_vocab,
                                               self.data.target_vocab, self._meta(metrics), state, keep=self.o.keep)
        return self.last_checkpoint

    def _keep_best(self, step: int, metrics: dict) -> None:
        """RUN/best: the model of the best held-out metric so far (exact match; BLEU for corpora)."""
        name = "bleu" if "bleu" in metrics else "exact_match"
        if self.best is None or metrics[name] > self.best["value"]:
            self.best = {"step": step, "metric": name, "value": metrics[name]}
            checkpoint.save_best(self.run_dir, step, self.model, self.data.source_vocab, self.data.target_vocab,
                                 self._meta(metrics))

    def _lr(self, step: int) -> float:
        o = self.o
        return lr_at(step, schedule=o.lr_schedule, warmup=o.warmup, d_model=self.cfg.d_model, lr_factor=o.lr_factor,
                     lr=o.lr, steps=o.steps)

    def _evaluate(self) -> dict:
        metrics = evaluate(self.model, self.data.heldout, self.data.source_vocab, self.data.target_vocab,
                           max_new_tokens=self.data.max_target_tokens, bleu=self.data.is_corpus,
                           autocast=_autocast(self.d.device, self.precision))
        return {**metrics, "split": self.data.split}

    # ------------------------------------------------------------------ the loop

    def _prepare_training_model(self) -> torch.nn.Module:
        train_model = self.model
        if self.d.enabled:
            ids = [self.d.local_rank] if self.d.device.type == "cuda" else None
            train_model = self.ddp = DDP(self.model, device_ids=ids)
        if self.o.compile:
            # The compiled wrapper serves the training steps only; evaluation and decoding (other
            # shapes, a KV cache) run the plain module, which compiling does not change.
            train_model = torch.compile(train_model)
        return train_model

    def _step(self, step: int, train_model: torch.nn.Module, amp) -> tuple:
        """One optimizer step; returns (loss sum, gradient norm, micro-batches), the first two on the
        device. --grad-accum N: the step's examples in N micro-batches (this process's share cut N
        ways), each loss sum divided by the whole step's taught positions, so the gradients add up to
        those of the whole batch; DDP averages over processes only at the last micro-batch."""
        o, d, n = self.o, self.d, self.o.grad_accum
        examples = self.data.stream.examples(step)
        micros = [collate(examples, d.rank * n + k, d.world * n).to(d.device) for k in range(n)]
        for group in self.optimizer.param_groups:
            group["lr"] = self._lr(step)
        loss_sum = nll_sum = 0.0
        for k, batch in enumerate(micros):
            sync = self.ddp.no_sync() if self.ddp is not None and k < n - 1 else contextlib.nullcontext()
            with sync:
                with amp:
                    if self.cfg.arch != "decoder-only":
                        logits = train_model(batch.src, batch.inp, src_padded=batch.src_padded)
                    else:
                        logits = train_model(batch.inp)
                micro_sum = smoothed_cross_entropy(logits, batch.out, o.label_smoothing)
                with torch.no_grad():       # the unsmoothed NLL of the same logits, for the log (no second forward)
                    nll_sum = nll_sum + (smoothed_cross_entropy(logits, batch.out, 0.0) if o.label_smoothing
                                         else micro_sum.detach())
                scaled = micro_sum * (d.world / batch.global_targets)
                (self.scaler.scale(scaled) if self.scaler else scaled).backward()
            loss_sum = loss_sum + micro_sum.detach()
        grad_norm = optimizer_step(self.optimizer, self.model.parameters(), o.clip, self.scaler)
        self.nll_sums[step] = nll_sum
        self.optimizer.zero_grad(set_to_none=True)
        if self.on_step is not None:
            self.on_step(step, self.model)
        return loss_sum, grad_norm.detach(), micros

    def _check(self, pending: list[tuple[int, float, float, int]]) -> list[float]:
        """Per-token losses of the pending steps (step, loss sum, gradient norm, taught tokens);
        DivergedError at the first that is not finite."""
        losses = []
        for step, loss_sum, norm, targets in pending:
            loss = loss_sum / targets
            if not (math.isfinite(loss) and math.isfinite(norm)):
                what, value = ("loss", loss) if not math.isfinite(loss) else ("gradient norm", norm)
                raise DivergedError(f"the {what} became {value} at step {step}; stopped without saving, the "
                                    f"last good checkpoint {self.last_checkpoint or '(none yet)'} is kept; "
                                    f"{diverged_advice(self.o, self.precision)}")
            losses.append(loss)
        return losses

    def run(self) -> TrainResult:
        o, d = self.o, self.d
        wall_start = time.perf_counter()
        self.optimizer = self._optimizer()
        self.tokens_seen, self.last_checkpoint = 0, None
        self.nll_sums: dict = {}                 # step -> unsmoothed loss sum on the device, until read out
        step = 0
        if self.state is not None:
            self.optimizer.load_state_dict(self.state["optimizer"])
            self.optimizer.param_groups[0]["weight_decay"] = o.weight_decay     # given again, or the run's own
            if self.scaler and "scaler" in self.state:
                self.scaler.load_state_dict(self.state["scaler"])
            step = int(self.state["step"])
            self.tokens_seen = int(self.state.get("tokens_seen", 0))
            _set_rng_state(self.state["rng"], d.device)
            self.last_checkpoint = checkpoint.latest(self.run_dir)
        first_step, tokens_before = step + 1, self.tokens_seen
        steps_total = o.steps
        seconds_total = o.minutes * 60 if o.minutes else (None if o.steps else 60.0)
        if steps_total is not None and step >= steps_total:
            raise ConfigError(f"the checkpoint is at step {step}; give --steps above it to train on")
        # Reading a loss waits for the GPU; on CUDA read them ten steps at a time.
        log_every = o.log_every or (10 if d.device.type == "cuda" else 1)
        save_every = o.save_every or o.eval_every
        train_model = self._prepare_training_model()
        amp = _autocast(d.device, self.precision)
        peak = peak_flops(torch.cuda.get_device_name(d.device)) if d.device.type == "cuda" else None
        log = RunLog(self.run_dir, step if self.state is not None else None, o.tensorboard) if d.main else None
        graphs = compiled_graphs() if o.compile else 0

        title = f"corpus {Path(o.corpus).name}" if o.corpus else f"task {o.task or 'dates'}"
        self.reporter.start(f"training {title}", steps_total, seconds_total, step)
        losses, evals = [], []
        pending: list = []                       # (step, loss sum, gradient norm, taught tokens)
        train_seconds = 0.0
        window_tokens, window_seconds, window_flops = 0, 0.0, 0.0
        stopped, goal_step, goal_seconds = None, None, None
        try:
            with _StopSignal() as stop:
                while stopped is None:
                    step += 1
                    t0 = time.perf_counter()
                    loss_sum, grad_norm, micros = self._step(step, train_model, amp)
                    batch = micros[0]                   # the counts of the whole step are in each
                    if o.compile and compiled_graphs() > graphs:      # this step compiled: its time is apart
                        if d.device.type == "cuda":
                            torch.cuda.synchronize(d.device)
                        self.compile_seconds += time.perf_counter() - t0
                        t0, graphs = time.perf_counter(), compiled_graphs()
                        tokens_before += batch.global_tokens          # nor its tokens in tokens/s
                    else:
                        window_tokens += batch.global_tokens
                    pending.append((step, loss_sum, grad_norm, batch.global_targets))
                    self.tokens_seen += batch.global_tokens
                    if peak is not None:
                        for b in micros:
                            src_len = b.src.shape[1] if b.src is not None else 0
                            window_flops += flops_per_step(self.model, b.inp.shape[0], src_len, b.inp.shape[1])

                    at_eval = step % o.eval_every == 0
                    at_save = step % save_every == 0
                    at_end = steps_total is not None and step >= steps_total
                    # Every process must read out at the same steps (it is a collective), so a
                    # signal only hurries the read-out of a single process.
                    if step % log_every == 0 or at_eval or at_save or at_end or (stop.requested and not d.enabled):
                        # The losses are read (one collective), checked, logged and shown; this is
                        # also where the processes agree on stopping.
                        time_up = seconds_total is not None and \
                            train_seconds + time.perf_counter() - t0 >= seconds_total
                        n = len(pending)
                        values = d.sum([float(x) for _, x, _, _ in pending] + [float(g) for _, _, g, _ in pending]
                                       + [float(self.nll_sums.pop(s)) for s, _, _, _ in pending]
                                       + [float(stop.requested), float(time_up and d.main)])
                        if d.device.type == "cuda":
                            torch.cuda.synchronize(d.device)
                        elapsed = time.perf_counter() - t0
                        checked = self._check([(s, x, g, t) for (s, _, _, t), x, g
                                               in zip(pending, values[:n], values[n:2 * n])])
                        losses += checked
                        train_seconds += elapsed
                        window_seconds += elapsed
                        if log is not None:
                            rate = window_tokens / max(window_seconds, 1e-9)
                            log.write([step_record(s, x, nll / t, self._lr(s), rate)
                                       for (s, _, _, t), x, nll in zip(pending, checked, values[2 * n:3 * n])])
                        pending.clear()
                        self.reporter.step(step, train_seconds, losses[-1], window_tokens / max(window_seconds, 1e-9),
                                           window_flops / window_seconds / peak if peak else None,
                                           self._lr(step))
                        window_tokens, window_seconds, window_flops = 0, 0.0, 0.0
                        if values[-2] > 0:
                            stopped = "interrupted"
                        elif values[-1] > 0:
                            stopped = "time"
                        elif at_end:
                            stopped = "steps"
                    else:
                        elapsed = time.perf_counter() - t0
                        train_seconds += elapsed
                        window_seconds += elapsed

                    metrics = None
                    if at_eval or stopped in ("time", "steps"):
                        reached = 0.0
                        if d.main:
                            metrics = self._evaluate()
                            evals.append({"step": step, "train_seconds": train_seconds, **metrics})
                            log.write([eval_record(step, train_seconds, metrics,
                                                   "bleu" if self.data.is_corpus else "exact_match")])
                            self.reporter.evaluation(step, train_seconds, metrics)
                            self._keep_best(step, metrics)
                            reached = float(self.goal is not None and metrics["exact_match"] >= self.goal)
                        if d.broadcast([reached])[0] > 0 and goal_step is None:
                            goal_step, goal_seconds = step, train_seconds
                            stopped = stopped or "goal"
                    if d.main and (at_save or stopped):
                        self._save(step, metrics)
        finally:
            self.reporter.close()
            if log is not None:
                log.close()
        d.barrier()
        return TrainResult(
            run_dir=self.run_dir, checkpoint=self.last_checkpoint, first_step=first_step, steps=step,
            losses=losses, evals=evals, train_seconds=train_seconds,
            wall_seconds=time.perf_counter() - wall_start,
            tokens_per_second=(self.tokens_seen - tokens_before) / max(train_seconds, 1e-9),
            stopped=stopped, goal=self.goal, goal_step=goal_step, goal_seconds=goal_seconds,
            is_main=d.main, compile_seconds=self.compile_seconds, best=self.best)
