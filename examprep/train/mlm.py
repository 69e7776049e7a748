"""`examprep train --arch encoder-only --objective mlm`: masked-LM training of the BERT-style
encoder of examprep.train.bert, with the trainer's schedule, checkpoints, log and stopping rules.

Data: the sentences of both text columns of a corpus (each distinct sentence once), or of a built-in
task's sources and targets (20,000 pairs drawn by seed). A share of the sentences (--heldout, by a
hash of the sentence, so the same everywhere) is held out; each held-out sentence gets one fixed
masking (drawn from --seed) so that the held-out masked-token accuracy of two evaluations, or of
two runs, is measured on the same gaps. Training batches are masked afresh at every step from
(seed, step): a resumed run sees exactly the masks it would have seen.
"""
from __future__ import annotations

import math
import random
import time
from pathlib import Path
from typing import Optional

import torch

from examprep.train import checkpoint
from examprep.train.bert import MASK_ID, masked_accuracy, mask_tokens, mlm_vocab
from examprep.train.data import BOS, EOS, PAD, CorpusStream, Example, _bucket, _pad, get_task, read_corpus
from examprep.train.distributed import setup, teardown
from examprep.checkpoints.errors import CheckpointError, ConfigError, CorpusError, DivergedError
from examprep.train.model import build_model
from examprep.checkpoints.config import TransformerConfig
from examprep.train.options import TrainOptions, check_objective, with_article
from examprep.train.report import Reporter, describe_best
from examprep.train.runlog import RunLog, eval_record, step_record
from examprep.train.controls import diverged_advice, recorded, resume_options
from examprep.train.precision import bf16_slower_note, compiled_graphs, make_scaler, optimizer_step
from examprep.train.schedule import lr_at
from examprep.train.trainer import (
    TrainResult, _autocast, _check_options, _resolve_precision, _check_writable_dir, _rng_state,
    _set_rng_state, _StopSignal, open_run, smoothed_cross_entropy, stop_reason,
)

TASK_PAIRS = 20_000            # built-in task: pairs drawn for the sentences


def sentences_of(o: TrainOptions) -> tuple[list[str], list[str]]:
    """Distinct sentences (first-seen order) of both columns, or of a task's pairs."""
    if o.corpus is not None:
        pairs = read_corpus(o.corpus).pairs
    else:
        task = get_task(o.task or "dates")
        rng = random.Random(f"mlm:{task.name}:{o.seed}")
        pairs = [task.draw(rng) for _ in range(TASK_PAIRS)]
    seen = list(dict.fromkeys(s for pair in pairs for s in pair))
    per_mille = round(1000 * o.heldout)
    train = [s for s in seen if _bucket(s) >= per_mille]
    heldout = [s for s in seen if _bucket(s) < per_mille]
    if not train:
        raise ConfigError(f"--heldout {o.heldout} leaves no training sentences")
    return train, heldout


class _MlmRun:
    def __init__(self, o: TrainOptions, reporter: Reporter, device: torch.device):
        self.reporter, self.device = reporter, device
        self.precision = _resolve_precision(o.precision, device)
        o, resumed, self.run_dir = open_run(o)
        if resumed and resumed.config.arch != "encoder-only":
            raise CheckpointError(f"--resume: {resumed.path} is {with_article(resumed.config.arch)} checkpoint, not a masked LM")
        self.o = o
        _check_writable_dir(self.run_dir)
        checkpoint.remove_stale_temporaries(self.run_dir)
        train, heldout = sentences_of(o)
        self.split = "held-out"
        if not heldout:
            heldout, self.split = train, "training"
            reporter.note("no held-out sentences: evaluating on the training sentences")
        heldout = heldout[: max(o.eval_size, 1)]
        self.vocab = resumed.source_vocab if resumed else mlm_vocab(train, o.tokens, o.min_count)
        examples, too_long = [], 0
        for s in train:
            ids = [BOS, *self.vocab.encode(s), EOS]
            if len(ids) > o.max_len:
                too_long += 1
            else:
                examples.append(Example([], ids, ids))
        if too_long:
            reporter.note(f"left out {too_long} training sentence(s) longer than --max-len {o.max_len} tokens")
        if not examples:
            raise CorpusError("no training sentences fit --max-len")
        self.stream = CorpusStream(examples, o.batch_tokens, o.seed)
        self.heldout = self._fixed_masks([[BOS, *self.vocab.encode(s), EOS][: o.max_len] for s in heldout])
        self.heldout_sentences = len(heldout)
        if resumed:
            self.cfg, self.model, self.state = resumed.config, resumed.model, resumed.trainer_state()
        else:
            self.cfg = TransformerConfig(
                arch="encoder-only", src_vocab_size=len(self.vocab), tgt_vocab_size=len(self.vocab),
                d_model=o.d_model, n_heads=o.heads, d_ff=o.d_ff, n_encoder_layers=o.layers, n_decoder_layers=0,
                dropout=o.dropout if o.dropout is not None else 0.1, norm=o.norm, final_norm=o.final_norm,
                positions=o.positions, max_len=o.max_len, share_embeddings=o.share, activation=o.activation)
            torch.manual_seed(o.seed)
            self.model, self.state = build_model(self.cfg), None
        self.model.to(device).train()
        self.heldout = [(inputs.to(device), labels.to(device)) for inputs, labels in self.heldout]
        self.goal = o.goal if o.goal else None
        slower = bf16_slower_note(self.precision, device)
        if slower:
            reporter.note(slower)
        self.scaler = make_scaler(self.precision, device)
        self.best = checkpoint.read_best(self.run_dir) if resumed else None
        self.compile_seconds = 0.0

    def _fixed_masks(self, rows: list[list[int]], size: int = 256) -> list:
        g = torch.Generator().manual_seed(10_007 + self.o.seed)
        return [mask_tokens(_pad(rows[i:i + size]), len(self.vocab), g) for i in range(0, len(rows), size)]

    def _meta(self, metrics: Optional[dict]) -> dict:
        o = self.o
        data = {"kind": "corpus" if o.corpus else "task", "task": None if o.corpus else (o.task or "dates"),
                "corpus": str(Path(o.corpus).resolve()) if o.corpus else None, "swap": False,
                "objective": "mlm", "max_target_tokens": None}
        # What ran: the precision `auto` resolved to; compiling is carried out (issue 40 item 1).
        threads = torch.get_num_threads() if self.device.type == "cpu" else o.threads
        return {"data": data, "training": recorded(o, precision=self.precision, threads=threads),
                "metrics": metrics or {}, "compile_seconds": round(self.compile_seconds, 3),
                **({"best": self.best} if self.best else {})}

    def _evaluate(self) -> dict:
        scores = masked_accuracy(self.model, self.heldout)
        # the run log's held-out loss: the unsmoothed cross-entropy per masked token
        return {**scores, "heldout_loss": scores["masked_loss"], "sentences": self.heldout_sentences,
                "split": self.split}

    def run(self) -> TrainResult:
        o = self.o
        wall_start = time.perf_counter()
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        rest = [p for p in self.model.parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": o.weight_decay},
                                 {"params": rest, "weight_decay": 0.0}], lr=0.0, betas=(0.9, 0.98), eps=1e-9)
        step, tokens_seen, last = 0, 0, None
        if self.state is not None:
            opt.load_state_dict(self.state["optimizer"])
            opt.param_groups[0]["weight_decay"] = o.weight_decay         # given again, or the run's own
            if self.scaler and "scaler" in self.state:
                self.scaler.load_state_dict(self.state["scaler"])
            step, tokens_seen = int(self.state["step"]), int(self.state.get("tokens_seen", 0))
            _set_rng_state(self.state["rng"], self.device)
            last = checkpoint.latest(self.run_dir)
        if o.steps is not None and step >= o.steps:
            raise ConfigError(f"the checkpoint is at step {step}; give --steps above it to train on")
        first_step, tokens_before = step + 1, tokens_seen
        seconds_total = o.minutes * 60 if o.minutes else (None if o.steps else 60.0)
        log = RunLog(self.run_dir, step if self.state is not None else None, o.tensorboard)
        title = f"masked LM on {'corpus ' + Path(o.corpus).name if o.corpus else 'task ' + (o.task or 'dates')}"
        self.reporter.note(f"{len(self.vocab):,} tokens ({o.tokens} level), {self.model.num_params():,} "
                           f"parameters; {self.heldout_sentences:,} {self.split} sentences for evaluation")
        self.reporter.start(title, o.steps, seconds_total, step)
        amp = _autocast(self.device, self.precision)
        # The compiled wrapper serves the training steps only; evaluation runs the plain module.
        train_model = torch.compile(self.model) if o.compile else self.model
        graphs = compiled_graphs() if o.compile else 0
        losses, evals, train_seconds, window = [], [], 0.0, [0, 0.0]
        stopped = goal_step = goal_seconds = None
        try:
            with _StopSignal() as stop:
                while stopped is None:
                    step += 1
                    t0 = time.perf_counter()
                    batch = _pad([e.inp for e in self.stream.examples(step)])
                    g = torch.Generator().manual_seed((o.seed * 1_000_003 + step) % 2**64)     # a seed up to 2**63
                    inputs, labels = (t.to(self.device) for t in mask_tokens(batch, len(self.vocab), g))
                    lr = lr_at(step, schedule=o.lr_schedule, warmup=o.warmup, d_model=self.cfg.d_model,
                               lr_factor=o.lr_factor, lr=o.lr, steps=o.steps)
                    for group in opt.param_groups:
                        group["lr"] = lr
                    loss_sum, nll_sum, chosen = self._accumulate(train_model, inputs, labels, amp)
                    optimizer_step(opt, self.model.parameters(), o.clip, self.scaler)
                    opt.zero_grad(set_to_none=True)
                    compiled = o.compile and compiled_graphs() > graphs
                    if compiled:                      # this step compiled: its time (and tokens) are apart
                        if self.device.type == "cuda":
                            torch.cuda.synchronize(self.device)
                        self.compile_seconds += time.perf_counter() - t0
                        t0, graphs = time.perf_counter(), compiled_graphs()
                    loss = float(loss_sum) / max(chosen, 1)
                    if not math.isfinite(loss):
                        raise DivergedError(f"the loss became {loss} at step {step}; stopped without saving, the "
                                            f"last good checkpoint {last or '(none yet)'} is kept; "
                                            f"{diverged_advice(o, self.precision)}")
                    elapsed = time.perf_counter() - t0
                    train_seconds += elapsed
                    tokens = int((batch != 0).sum())
                    tokens_seen += tokens
                    tokens_before += tokens if compiled else 0
                    window[0] += 0 if compiled else tokens
                    window[1] += elapsed
                    losses.append(loss)
                    log.write([step_record(step, loss, float(nll_sum) / max(chosen, 1), lr, tokens / max(elapsed, 1e-9))])
                    self.reporter.step(step, train_seconds, loss, window[0] / max(window[1], 1e-9), None, lr)
                    window = [0, 0.0]
                    stopped = stop_reason(stop.requested, step, o.steps, train_seconds, seconds_total)
                    metrics = None
                    if step % o.eval_every == 0 or stopped in ("steps", "time"):
                        metrics = self._evaluate()
                        evals.append({"step": step, "train_seconds": train_seconds, **metrics})
                        log.write([eval_record(step, train_seconds, metrics, "masked_accuracy")])
                        self.reporter.evaluation(step, train_seconds, metrics)
                        if self.best is None or metrics["masked_accuracy"] > self.best["value"]:
                            self.best = {"step": step, "metric": "masked_accuracy", "value": metrics["masked_accuracy"]}
                            checkpoint.save_best(self.run_dir, step, self.model, self.vocab, self.vocab,
                                                 self._meta(metrics))
                        if self.goal is not None and goal_step is None and metrics["masked_accuracy"] >= self.goal:
                            goal_step, goal_seconds = step, train_seconds
                            stopped = stopped or "goal"
                    if step % (o.save_every or o.eval_every) == 0 or stopped:
                        state = {"step": step, "optimizer": opt.state_dict(), "rng": _rng_state(self.device),
                                 "tokens_seen": tokens_seen,
                                 **({"scaler": self.scaler.state_dict()} if self.scaler else {})}
                        last = checkpoint.save(self.run_dir, step, self.model, self.vocab, self.vocab,
                                               self._meta(metrics), state, keep=o.keep)
        finally:
            self.reporter.close()
            log.close()
        return TrainResult(run_dir=self.run_dir, checkpoint=last, first_step=first_step, steps=step, losses=losses,
                           evals=evals, train_seconds=train_seconds, wall_seconds=time.perf_counter() - wall_start,
                           tokens_per_second=(tokens_seen - tokens_before) / max(train_seconds, 1e-9),
                           stopped=stopped, goal=self.goal, goal_step=goal_step, goal_seconds=goal_seconds,
                           compile_seconds=self.compile_seconds, best=self.best)

    def _accumulate(self, train_model, inputs: torch.Tensor, labels: torch.Tensor, amp) -> tuple:
        """Forward and backward over the step's masked batch in --grad-accum micro-batches of rows,
        each loss sum divided by the masked tokens of the whole batch; (loss sum, unsmoothed NLL sum, masked tokens)."""
        where = labels != PAD
        chosen = int(where.sum())
        loss_sum = torch.zeros((), device=self.device)
        nll_sum = torch.zeros((), device=self.device)
        for rows in torch.arange(inputs.shape[0]).tensor_split(self.o.grad_accum):
            if len(rows) == 0:
                continue
            micro_in, micro_labels, micro_where = inputs[rows], labels[rows], where[rows]
            with amp:
                logits = train_model(micro_in, micro_where)
            micro_sum = smoothed_cross_entropy(logits, micro_labels[micro_where], self.o.label_smoothing)
            with torch.no_grad():       # the unsmoothed NLL of the same logits, for the run log
                nll_sum += (smoothed_cross_entropy(logits, micro_labels[micro_where], 0.0)
                            if self.o.label_smoothing else micro_sum.detach())
            scaled = micro_sum / max(chosen, 1)
            (self.scaler.scale(scaled) if self.scaler else scaled).backward()
            loss_sum += micro_sum.detach()
        return loss_sum, nll_sum, chosen


def train_mlm(options: TrainOptions, reporter: Optional[Reporter] = None) -> TrainResult:
    """Masked-LM training as `options` say, in one process (CPU or one GPU). Raises TrainError
    subclasses for user errors."""
    check_objective(options.arch, options.objective)
    options = resume_options(options)        # --resume: the run's own options, its thread count among them
    _check_options(options)
    d = setup(options.device, options.threads)
    try:
        if d.enabled:
            raise ConfigError("masked-LM training runs in one process; start it without torchrun")
        return _MlmRun(options, reporter or Reporter(), d.device).run()
    finally:
        teardown(d)


def summary(result: TrainResult) -> str:
    """What a finished masked-LM run did, for the terminal."""
    why = {"steps": "reached --steps", "time": "used its time", "goal": "reached the goal",
           "interrupted": "interrupted"}[result.stopped]
    lines = [f"stopped at step {result.steps:,} ({why}) after {result.train_seconds:.1f} s of training, "
             f"{result.tokens_per_second / 1e3:,.1f}k tokens/s"]
    if result.compile_seconds:
        lines.append(f"compiling took {result.compile_seconds:.1f} s, not counted as training (nor in --minutes)")
    if result.evals:
        last = result.evals[-1]
        lines.append(f"{last['split']}: masked-token accuracy {100 * last['masked_accuracy']:.1f}% on "
                     f"{last['masked_tokens']:,} masked tokens of {last['sentences']:,} sentences "
                     f"(at step {last['step']:,})")
    if result.checkpoint is not None:
        lines.append(f"checkpoint: {result.checkpoint}")
        if result.best:
            lines.append(describe_best(result.run_dir, result.best))
        if result.stopped == "interrupted":
            lines.append(f"continue with: examprep train --out {result.run_dir} --resume")
        lines.append(f"try it: examprep fill-mask --checkpoint {result.run_dir} \"... {'[MASK]'} ...\"")
    return "\n".join(lines)


__all__ = ["MASK_ID", "sentences_of", "summary", "train_mlm"]
