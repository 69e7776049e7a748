"""The training loop: it learns, it saves and resumes exactly, and bad situations end cleanly."""
from __future__ import annotations

import json
import math
import subprocess

import pytest
import torch

from examprep.train import checkpoint
from examprep.train.data import BOS, EOS, TASKS, collate, make_example, task_vocab
from examprep.train.decode import greedy_encoder_decoder, strip
from examprep.checkpoints.errors import CheckpointError, ConfigError, CorpusError, DeviceError, DivergedError, WriteError
from examprep.train.evaluate import corpus_bleu, evaluate, translate
from examprep.train.model import build_model
from examprep.train.trainer import RunLog, TrainOptions, smoothed_cross_entropy, train

from .helpers import PYTHON, TATOEBA, small_config

TINY = dict(task="reverse", d_model=32, layers=1, heads=4, d_ff=64, batch_tokens=400, eval_size=50,
            eval_every=1000, warmup=20, lr_factor=1.0)


def _options(tmp_path, **overrides) -> TrainOptions:
    return TrainOptions(**{**TINY, "out": str(tmp_path / "run"), **overrides})


def test_a_tiny_model_overfits_a_tiny_batch():
    vocab = task_vocab(TASKS["reverse"])
    pairs = [("abcdef", "fedcba"), ("hello", "olleh"), ("qwerty", "ytrewq"), ("zzab", "bazz"),
             ("mnop", "ponm"), ("xylophone", "enohpolyx"), ("kayak", "kayak"), ("ruby", "ybur")]
    batch = collate([make_example(vocab.encode(s), vocab.encode(t), "encoder-decoder") for s, t in pairs])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), max_len=32))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(300):
        loss = smoothed_cross_entropy(model(batch.src, batch.inp), batch.out, 0.0) / batch.global_targets
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.01
    model.eval()
    out = strip(greedy_encoder_decoder(model, batch.src, max_new_tokens=12, bos=BOS, eos=EOS), EOS, 0)
    assert [vocab.decode(o) for o in out] == [t for _, t in pairs]


def test_save_then_load_gives_identical_outputs(tmp_path):
    vocab = task_vocab(TASKS["sort"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), positions="learned",
                                     norm="pre", share_embeddings="output")).eval()
    step_dir = checkpoint.save(tmp_path, 7, model, vocab, vocab, {"data": {"max_target_tokens": 17}})
    loaded = checkpoint.load(tmp_path)
    assert loaded.path == step_dir and loaded.config == model.cfg and loaded.target_vocab == vocab
    src, tgt = torch.randint(5, 31, (3, 8)), torch.randint(5, 31, (3, 6))
    with torch.no_grad():
        assert torch.equal(loaded.model(src, tgt), model(src, tgt))
    assert loaded.model.lm_head.weight is loaded.model.tgt_embed.weight          # still tied
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[name], tensor), name


def test_a_trained_run_reloads_and_scores_what_it_recorded(tmp_path):
    result = train(_options(tmp_path, steps=40, eval_every=40))
    assert result.stopped == "steps" and result.steps == 40
    assert result.losses[-1] < result.losses[0]
    loaded = checkpoint.load(result.run_dir)
    assert loaded.path == result.checkpoint
    recorded = json.loads((result.checkpoint / "config.json").read_text())["metrics"]
    again = evaluate(loaded.model, TASKS["reverse"].heldout_pairs(50, 0), loaded.source_vocab, loaded.target_vocab,
                     max_new_tokens=17)
    assert {**again, "split": "held-out"} == recorded == {k: v for k, v in result.evals[-1].items()
                                                        if k not in ("step", "train_seconds")}


def test_resume_continues_the_same_loss_curve(tmp_path):
    kw = dict(dropout=0.2, save_every=6, eval_every=1000)   # dropout on: the RNG state must resume too
    straight = train(_options(tmp_path / "a", steps=12, **kw))
    first = train(_options(tmp_path / "b", steps=6, **kw))
    resumed = train(_options(tmp_path / "b", steps=12, resume=True, **kw))
    assert resumed.first_step == 7
    assert first.losses == pytest.approx(straight.losses[:6], abs=0, rel=0)
    assert resumed.losses == pytest.approx(straight.losses[6:], rel=1e-6)
    logged = [r["loss"] for r in RunLog.read(tmp_path / "b" / "run") if "loss" in r]
    assert logged == pytest.approx(straight.losses, rel=1e-6)               # one curve in the run's log
    a, b = checkpoint.load(straight.run_dir).model, checkpoint.load(resumed.run_dir).model
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)


def test_resume_needs_a_checkpoint_and_a_fresh_run_refuses_to_overwrite_one(tmp_path):
    with pytest.raises(CheckpointError, match="holds no checkpoint to resume"):
        train(_options(tmp_path, steps=3, resume=True))
    train(_options(tmp_path, steps=3))
    with pytest.raises(ConfigError, match="already holds a checkpoint; add --resume"):
        train(_options(tmp_path, steps=6))
    with pytest.raises(ConfigError, match="at step 3; give --steps above it"):
        train(_options(tmp_path, steps=3, resume=True))


def test_a_nan_loss_stops_with_a_message_and_keeps_the_last_good_checkpoint(tmp_path):
    def poison(step, model):
        if step == 7:
            with torch.no_grad():
                model.lm_head.weight[5, 0] = float("nan")

    with pytest.raises(DivergedError, match="became nan at step 8.*step-000005 is kept"):
        train(_options(tmp_path, steps=20, save_every=5), on_step=poison)
    kept = checkpoint.latest(tmp_path / "run")
    assert kept.name == "step-000005"
    loaded = checkpoint.load(kept)
    assert all(bool(torch.isfinite(p).all()) for p in loaded.model.parameters())


@pytest.mark.parametrize("schedule, advice", [({}, "try a lower --lr-factor$"),
                                               ({"lr_schedule": "constant", "lr": 1e-3, "lr_factor": TrainOptions().lr_factor},
                                                "try a lower --lr$")])
def test_a_diverged_run_advises_the_rate_option_its_schedule_takes(tmp_path, schedule, advice):
    """A cosine/linear/constant run refuses --lr-factor, so its divergence names --lr (and noam's
    --lr-factor); an fp32 run is not told to try --precision fp32."""
    def poison(step, model):
        if step == 2:
            with torch.no_grad():
                model.lm_head.weight[5, 0] = float("nan")

    with pytest.raises(DivergedError, match=advice):
        train(_options(tmp_path, steps=4, precision="fp32", **schedule), on_step=poison)


def test_weights_gone_bad_are_never_saved(tmp_path):
    def poison(step, model):
        if step == 10:
            with torch.no_grad():
                model.lm_head.weight[5, 0] = float("inf")

    with pytest.raises(DivergedError, match="inf"):
        train(_options(tmp_path, steps=20, save_every=5, log_every=5), on_step=poison)
    assert checkpoint.latest(tmp_path / "run").name == "step-000005"


def test_a_failed_write_is_a_clear_error_and_the_previous_checkpoint_stays(tmp_path, monkeypatch):
    import safetensors.torch

    real = safetensors.torch.save_file
    calls = []

    def flaky(tensors, filename, metadata=None, **kw):
        calls.append(filename)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(tensors, filename, metadata=metadata, **kw)

    monkeypatch.setattr(safetensors.torch, "save_file", flaky)
    with pytest.raises(WriteError, match="No space left on device; the previous checkpoint .*step-000004 is kept"):
        train(_options(tmp_path, steps=12, save_every=4))
    run = tmp_path / "run"
    assert checkpoint.latest(run).name == "step-000004"
    assert checkpoint.load(run).path.name == "step-000004"
    assert [p.name for p in run.iterdir() if p.name.startswith(".")] == []        # no half-written leftovers


def test_a_safetensors_write_error_is_a_one_line_write_error_and_leaves_no_temporary_directory(tmp_path, monkeypatch):
    import safetensors.torch
    from safetensors import SafetensorError

    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab)))

    def full(tensors, filename, metadata=None, **kw):
        open(filename, "wb").write(b"half")
        raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                              'message: "No space left on device" })')

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    with pytest.raises(WriteError) as err:
        checkpoint.save(tmp_path / "run", 50, model, vocab, vocab, {})
    assert str(err.value) == (f"could not write checkpoint {tmp_path / 'run' / 'step-000050'}: No space left "
                              f"on device; no earlier checkpoint exists")
    assert list((tmp_path / "run").iterdir()) == []


def test_every_checkpoint_file_has_the_same_permissions(tmp_path):
    import os
    import stat

    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab)))
    old = os.umask(0o022)
    try:
        step_dir = checkpoint.save(tmp_path / "run", 1, model, vocab, vocab, {}, trainer_state={"x": 1})
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in step_dir.iterdir()}
    assert modes == dict.fromkeys(["model.safetensors", "config.json", "vocab.json", "trainer.pt"], 0o644)


def test_a_checkpoint_whose_config_does_not_match_its_weights_is_refused(tmp_path):
    result = train(_options(tmp_path, steps=2))
    config = result.checkpoint / "config.json"
    meta = json.loads(config.read_text())
    meta["model"]["d_ff"] = 128
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"config.json does not match model.safetensors: 'decoder.layers.0.ff.linear1.bias' "
                                                  r"is \[64\] in the weights but \[128\] for the config"):
        checkpoint.load(result.run_dir)
    meta["model"]["d_ff"] = 64
    meta["model"]["n_decoder_layers"] = 2
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="does not match model.safetensors"):
        checkpoint.load(result.run_dir)
    meta["model"]["n_decoder_layers"] = 1
    meta["model"]["tgt_vocab_size"] = 40
    meta["model"]["src_vocab_size"] = 40
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="vocab.json has 31 source and 31 target tokens but config.json says 40"):
        checkpoint.load(result.run_dir)
    (result.checkpoint / "model.safetensors").unlink()
    with pytest.raises(CheckpointError, match="missing model.safetensors"):
        checkpoint.load(result.run_dir)
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        checkpoint.load(tmp_path)


def test_a_broken_latest_pointer_or_a_file_path_is_named_in_the_error(tmp_path):
    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab)))
    step_dir = checkpoint.save(tmp_path / "run", 3, model, vocab, vocab, {})
    with pytest.raises(CheckpointError, match=r"config.json is a file, but a directory is expected: the run "
                                              r"directory or the step directory that holds config.json \(.*step-000003 here\)"):
        checkpoint.load(step_dir / "config.json")
    # the pointer file itself, as a user may tab-complete it: followed to its step directory
    assert checkpoint.resolve(tmp_path / "run" / "latest") == step_dir
    (tmp_path / "run" / "latest").write_text("step-000999\n")
    with pytest.raises(CheckpointError, match=r"latest names step-000999, which does not exist"):
        checkpoint.load(tmp_path / "run")
    with pytest.raises(CheckpointError, match=r"latest names step-000999, which does not exist"):
        checkpoint.load(tmp_path / "run" / "latest")
    with pytest.raises(CheckpointError, match=r"--resume: .*latest names step-000999, which does not exist"):
        train(_options(tmp_path, steps=5, resume=True))
    (tmp_path / "run" / "latest").write_text("\n")
    with pytest.raises(CheckpointError, match=r"latest is empty"):
        checkpoint.load(tmp_path / "run")
    assert checkpoint.latest(tmp_path / "run") is None


def test_without_a_terminal_the_reporter_prints_plain_lines_and_no_live_bar():
    import io

    from rich.console import Console

    from examprep.train.report import RichReporter

    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=40), log_seconds=0)
    reporter.start("training task dates", 10, None, 0)
    reporter.step(5, 1.0, 2.5, 12345.0, None, 1e-3)
    reporter.evaluation(10, 2.0, {"token_accuracy": 0.5, "exact_match": 0.25, "pairs": 40})
    reporter.evaluation(12, 2.5, {"token_accuracy": 0.5, "exact_match": 0.25, "pairs": 40,
                                  "heldout_loss": 0.5, "perplexity": 1.6487212707})
    reporter.close()
    assert out.getvalue().splitlines() == [
        "step 5 · 1s: loss 2.500 · 12.3k tok/s · lr 1.00e-03",
        "step 10 (2.0s): token acc 50.00% · exact 25.00% on 40 held-out pairs",
        "step 12 (2.5s): token acc 50.00% · exact 25.00% · loss 0.500 (ppl 1.65) on 40 held-out pairs"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_clear_error(tmp_path):
    with pytest.raises(DeviceError, match="--device cuda: no CUDA GPU is visible"):
        train(_options(tmp_path, steps=2, device="cuda"))
    assert not (tmp_path / "run").exists()


def test_bad_options_are_clear_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is a file; give a directory"):
        train(_options(tmp_path, steps=2, out=str(tmp_path / "file")))
    with pytest.raises(ConfigError, match="either --task or --corpus"):
        train(_options(tmp_path, steps=2, corpus="x.tsv"))
    with pytest.raises(CorpusError, match="none.tsv: no such file"):
        train(_options(tmp_path, task=None, steps=2, corpus=str(tmp_path / "none.tsv")))
    with pytest.raises(ConfigError, match="--precision 'fp8'"):
        train(_options(tmp_path, steps=2, precision="fp8"))
    with pytest.raises(ConfigError, match="not divisible"):
        train(_options(tmp_path, steps=2, d_model=30))


@pytest.mark.parametrize("overrides, message", [
    (dict(lr_factor=-1.0), "--lr-factor must be a finite positive number, got -1.0"),
    (dict(lr_factor=float("inf")), "--lr-factor must be a finite positive number, got inf"),
    (dict(minutes=float("nan")), "--minutes must be a finite positive number, got nan"),
    (dict(minutes=float("inf")), "--minutes must be a finite positive number, got inf"),
    (dict(minutes=0.0), "--minutes must be a finite positive number, got 0.0"),
    (dict(threads=-1), "--threads must be at least 0"),
    (dict(threads=100000), "--threads 100000 is more than"),
    (dict(goal=2.0), r"--goal must be in \(0, 1\]"),
    (dict(goal=-1.0), r"--goal must be in \(0, 1\]"),
    (dict(batch_tokens=99999999999999), "--batch-tokens 99999999999999 is more than the 10,000,000"),
    (dict(d_model=10000000000), "d_model=10000000000.* would hold about 1.2e\\+21 parameters"),
    (dict(out="x" * 300), "--out: the name 'x{40}…' is 300 bytes long; this file system allows at most"),
])
def test_impossible_options_are_refused_before_any_work(tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message):
        train(_options(tmp_path, steps=2, **overrides))
    assert not (tmp_path / "run").exists()


def test_a_model_that_cannot_be_allocated_is_a_config_error_naming_its_size(tmp_path, monkeypatch):
    from examprep.train import model as model_module

    def no_memory(cfg):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:114] DefaultCPUAllocator: not enough memory")

    monkeypatch.setattr(model_module, "EncoderDecoder", no_memory)
    with pytest.raises(ConfigError, match=r"cannot build a model with d_model=32, d_ff=64, 1\+1 layers "
                                          r"\(about .* parameters\): \[enforce fail.*not enough memory"):
        train(_options(tmp_path, steps=2))


@pytest.mark.parametrize("change, message", [
    (dict(model={"layer_norm_eps": None}), "layer_norm_eps must be a finite number, got None"),
    (dict(model={"d_model": "x"}), "d_model must be an integer, got 'x'"),
    (dict(model={"n_heads": 2.5}), "n_heads must be an integer, got 2.5"),
    (dict(model={"final_norm": "yes"}), "final_norm must be true, false or null, got 'yes'"),
    (dict(model={"layer_norm_eps": -1}), "layer_norm_eps must be positive"),
    (dict(model={"d_model": 10**10}), "would hold about"),
    (dict(version=99), "is checkpoint version 99, written by a newer examprep; this examprep reads version 1"),
    (dict(version="1"), "version must be a positive integer, got '1'"),
    (dict(data={"max_target_tokens": "x"}), "data.max_target_tokens must be an integer"),
])
def test_a_config_json_with_wrong_types_or_a_newer_version_is_a_checkpoint_error(tmp_path, change, message):
    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab)))
    step_dir = checkpoint.save(tmp_path / "run", 1, model, vocab, vocab, {"data": {}})
    config = step_dir / "config.json"
    meta = json.loads(config.read_text())
    for key, value in change.items():
        if isinstance(value, dict) and key == "model":
            meta[key].update(value)
        else:
            meta[key] = value
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message):
        checkpoint.load(tmp_path / "run")


def test_the_dates_default_reaches_its_exact_match_goal_within_a_fixed_number_of_steps_and_aligns(tmp_path):
    # The recipe of `examprep train` with no options (dates, its model, batch and schedule), held to a
    # step budget instead of its one-minute time budget so that the test does not depend on the
    # machine's load, and on one thread: the same arithmetic, so the same trajectory on any machine
    # (the CLI picks threads by load, which changes the rounding). The time is printed, not asserted.
    from examprep.train.attention_map import alignment_rate
    from examprep.train.serve import Translator

    result = train(TrainOptions(out=str(tmp_path / "dates"), steps=500, threads=1))
    print(f"\ndates default: {100 * result.goal}% exact match reached at step {result.goal_step} after "
          f"{result.goal_seconds:.1f} s of training ({result.wall_seconds:.1f} s in all, "
          f"{result.tokens_per_second / 1e3:.1f}k tokens/s)")
    assert result.goal == 0.995 and result.stopped == "goal"
    assert result.goal_step <= 500
    assert result.evals[-1]["pairs"] == 2000 and result.evals[-1]["exact_match"] >= 0.995
    # issue 9's goal: the best head of the last cross-attention layer looks at the matching source
    # field (day, month, year) for >= 90% of the output digits of 200 held-out dates
    sources = [s for s, _ in TASKS["dates"].heldout_pairs(200, seed=1)]
    rates = alignment_rate(Translator.load(tmp_path / "dates"), sources)
    print("alignment rate per head:", {h: f"{r:.1%}" for h, r in rates.items()})
    assert max(rates.values()) >= 0.90


@pytest.mark.slow
def test_examprep_train_with_no_options_reaches_the_goal_in_its_minute(tmp_path):
    res = subprocess.run([PYTHON, "-m", "examprep", "train"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    print("\n" + res.stdout)
    assert "(reached the goal)" in res.stdout and "goal 99.5% exact match reached at step" in res.stdout
    run_dir = next((tmp_path / "runs").iterdir())
    res = subprocess.run([PYTHON, "-m", "examprep", "translate", "--checkpoint", str(run_dir), "29 Nov 2026",
                          "November 29, 2026", "29/11/2026"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["2026-11-29"] * 3


@pytest.mark.slow
def test_compiled_training_follows_the_eager_loss_curve(tmp_path):
    eager = train(_options(tmp_path / "eager", steps=8))
    compiled = train(_options(tmp_path / "compiled", steps=8, compile=True))
    assert compiled.losses == pytest.approx(eager.losses, rel=1e-4)


def test_bleu_is_sacrebleu_corpus_bleu_with_every_translation_as_a_reference():
    import sacrebleu

    assert corpus_bleu(["Je suis fatigué !"], ["Je suis fatigué !"]) == pytest.approx(100.0)
    assert corpus_bleu(["Il pleut ."], ["Je suis fatigué !"]) < 10
    hyps = ["Je suis très fatiguée .", "Il pleut beaucoup ."]
    refs = [["Je suis très fatigué .", "Je suis très fatiguée ."], ["Il pleut fort ."]]
    expected = sacrebleu.corpus_bleu(hyps, [["Je suis très fatigué .", "Il pleut fort ."],
                                            ["Je suis très fatiguée .", None]]).score
    assert corpus_bleu(hyps, refs) == pytest.approx(expected)
    assert corpus_bleu(hyps, refs) > corpus_bleu(hyps, [r[0] for r in refs])


def test_a_source_with_several_translations_is_scored_against_all_of_them():
    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab))).eval()
    out_abc, out_xyz = translate(model, ["abc", "xyz"], vocab, vocab, max_new_tokens=6)
    pairs = [("abc", out_abc + "q"), ("abc", out_abc), ("xyz", out_xyz + "q")]
    metrics = evaluate(model, pairs, vocab, vocab, max_new_tokens=6)
    assert metrics["pairs"] == 3 and metrics["sources"] == 2
    assert metrics["exact_match"] == 0.5               # "abc" is right by its second translation only


def _distinct_pairs(n: int) -> list[tuple[str, str]]:
    seen, pairs = set(), []
    for line in TATOEBA.read_text(encoding="utf-8").splitlines():
        src, tgt = line.split("\t")[:2]
        if src not in seen:
            seen.add(src)
            pairs.append((src, tgt))
            if len(pairs) == n:
                return pairs
    raise AssertionError("not enough distinct sources")


@pytest.mark.skipif(not TATOEBA.exists(), reason=f"{TATOEBA} is absent (../shared is not beside this clone)")
def test_64_tatoeba_pairs_are_overfitted_to_bleu_90(tmp_path):
    pairs = _distinct_pairs(64)
    corpus = tmp_path / "fr-en-64.tsv"
    corpus.write_text("".join(f"{s}\t{t}\tCC-BY 2.0 (France)\n" for s, t in pairs), encoding="utf-8")
    result = train(TrainOptions(corpus=str(corpus), tokens="word", heldout=0.0, dropout=0.0, d_model=64, layers=2,
                                heads=4, d_ff=256, batch_tokens=1200, lr_factor=2.0, warmup=60, steps=150,
                                eval_every=50, label_smoothing=0.0, out=str(tmp_path / "run")))
    loaded = checkpoint.load(result.run_dir)
    hyps = translate(loaded.model, [s for s, _ in pairs], loaded.source_vocab, loaded.target_vocab, max_new_tokens=20)
    bleu = corpus_bleu(hyps, [t for _, t in pairs])
    history = [round(e["bleu"], 1) for e in result.evals]
    print(f"\n64 Tatoeba pairs: BLEU {bleu:.1f} after {result.steps} steps, {result.train_seconds:.1f} s; "
          f"BLEU at each evaluation: {history}")
    assert bleu >= 90
    assert result.evals[-1]["bleu"] == pytest.approx(bleu)


def test_decoder_only_trains_evaluates_and_translates(tmp_path):
    result = train(_options(tmp_path, task="copy", arch="decoder-only", steps=40, eval_every=40, layers=2))
    assert result.losses[-1] < result.losses[0] and result.evals[-1]["pairs"] == 50
    loaded = checkpoint.load(result.run_dir)
    assert loaded.config.arch == "decoder-only" and not hasattr(loaded.model, "encoder")
    outputs = translate(loaded.model, ["abcd", "zzzzzzzzzz"], loaded.source_vocab, loaded.target_vocab,
                        max_new_tokens=17)
    assert len(outputs) == 2 and all(set(o) <= set("abcdefghijklmnopqrstuvwxyz") for o in outputs)


def test_a_corpus_with_separate_vocabularies_round_trips(tmp_path):
    corpus = tmp_path / "pairs.tsv"
    corpus.write_text("".join(f"the {w}\tle {w.upper()} !\n" for w in ("cat", "dog", "sun", "moon", "tree")) * 4,
                      encoding="utf-8")
    result = train(TrainOptions(corpus=str(corpus), tokens="word", share="none", swap=True, heldout=0.0, d_model=32,
                                layers=1, heads=4, d_ff=64, steps=5, out=str(tmp_path / "run")))
    loaded = checkpoint.load(result.run_dir)
    assert loaded.source_vocab != loaded.target_vocab                   # French-side words vs English-side
    assert " CAT" in loaded.source_vocab.tokens and " CAT" not in loaded.target_vocab.tokens
    assert " cat" in loaded.target_vocab.tokens and " !" not in loaded.target_vocab.tokens
    assert loaded.config.src_vocab_size == len(loaded.source_vocab) != loaded.config.tgt_vocab_size
    assert result.evals[-1]["split"] == "training" and "bleu" in result.evals[-1]


def test_bf16_autocast_trains_on_the_cpu_too(tmp_path):
    result = train(_options(tmp_path, steps=30, precision="bf16"))
    assert all(math.isfinite(x) for x in result.losses) and result.losses[-1] < result.losses[0]
    loaded = checkpoint.load(result.run_dir)
    assert loaded.model.lm_head.weight.dtype == torch.float32           # autocast keeps fp32 weights


def test_only_the_newest_checkpoints_are_kept_even_past_a_million_steps(tmp_path):
    vocab = task_vocab(TASKS["copy"])
    model = build_model(small_config(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab)))
    for step in (999_998, 999_999, 1_000_000, 1_000_001):
        checkpoint.save(tmp_path, step, model, vocab, vocab, {}, keep=2)
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-1000000", "step-1000001"]
    assert checkpoint.latest(tmp_path).name == "step-1000001"
