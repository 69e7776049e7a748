"""The BERT-style encoder: BERT's masking, the masked-LM training command and fill-mask."""
from __future__ import annotations

import torch
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint
from examprep.train.bert import (FIRST_WORD, MASK, MASK_ID, encode_with_masks, fill_mask, mask_tokens,
                                 mlm_vocab)
from examprep.checkpoints.config import TransformerConfig
from examprep.train.model import build_model
from examprep.checkpoints.vocab import BOS, EOS, PAD, UNK

runner = CliRunner()
TINY = ["--arch", "encoder-only", "--objective", "mlm", "--d-model", "32", "--layers", "1", "--heads", "4",
        "--d-ff", "64", "--batch-tokens", "400", "--warmup", "50", "--lr-factor", "0.5", "--heldout", "0",
        "--dropout", "0", "--label-smoothing", "0", "--threads", "1"]


def run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def test_masking_chooses_15_percent_of_the_words_and_treats_them_80_10_10():
    vocab_size = 50
    g = torch.Generator().manual_seed(1)
    words = torch.randint(FIRST_WORD, vocab_size, (400, 100), generator=g)
    tokens = torch.cat([torch.full((400, 1), BOS), words, torch.full((400, 1), EOS), torch.zeros(400, 5, dtype=torch.long)], 1)
    tokens[:, 3] = UNK
    inputs, labels = mask_tokens(tokens, vocab_size, torch.Generator().manual_seed(2))
    chosen = labels != PAD
    # 99 words per sentence (one is <unk>): round(0.15 · 99) = 15 chosen in every sentence
    assert chosen.sum(1).tolist() == [15] * 400
    assert not chosen[:, 0].any() and not chosen[:, 3].any() and not chosen[:, 101:].any()  # specials never
    assert torch.equal(labels[chosen], tokens[chosen])
    n = int(chosen.sum())
    masked = (inputs[chosen] == MASK_ID).sum() / n
    kept = (inputs[chosen] == tokens[chosen]).sum() / n
    swapped = ((inputs[chosen] != MASK_ID) & (inputs[chosen] != tokens[chosen])).sum() / n
    # 6,000 draws: three standard deviations of a share near 0.1 are under 0.012
    assert abs(masked - 0.8) < 0.02 and abs(swapped - 0.1 * (1 - 1 / 44)) < 0.015 and abs(kept - (0.1 + 0.1 / 44)) < 0.015
    assert bool(((inputs[chosen] >= FIRST_WORD) | (inputs[chosen] == MASK_ID)).all())    # random tokens are words
    assert torch.equal(inputs[~chosen], tokens[~chosen])                                   # the rest untouched


def test_a_short_sentence_gets_one_mask_and_an_empty_one_none():
    tokens = torch.tensor([[BOS, 10, 11, EOS, PAD], [BOS, UNK, EOS, PAD, PAD]])
    _, labels = mask_tokens(tokens, 20, torch.Generator().manual_seed(0))
    assert (labels != PAD).sum(1).tolist() == [1, 0]


def test_mask_is_one_token_at_word_and_char_level():
    words = mlm_vocab(["Je suis fatigué.", "Je suis là !"], "word")
    assert words.tokens[MASK_ID] == MASK
    ids = encode_with_masks(words, "Je suis [MASK] .")
    assert ids[2] == MASK_ID and len(ids) == 4 and UNK not in ids      # " ." read as the corpus's "."
    chars = mlm_vocab(["abc"], "char")
    assert encode_with_masks(chars, "a[MASK]c") == [chars.index["a"], MASK_ID, chars.index["c"]]


def test_the_encoder_reads_both_directions_and_ignores_padding():
    cfg = TransformerConfig(arch="encoder-only", src_vocab_size=30, tgt_vocab_size=30, d_model=32, n_heads=4,
                            d_ff=64, n_encoder_layers=2, n_decoder_layers=0, dropout=0.0, max_len=32)
    model = build_model(cfg).eval()
    a = torch.tensor([[BOS, 10, 11, 12, EOS]])
    b = torch.tensor([[BOS, 10, 11, 13, EOS]])
    assert not torch.allclose(model(a)[0, 1], model(b)[0, 1])        # position 1 sees a later token
    padded = torch.tensor([[BOS, 10, 11, 12, EOS, PAD, PAD]])
    torch.testing.assert_close(model(padded)[:, :5], model(a))
    assert model.lm_head.weight is model.src_embed.weight           # tied, as BERT's
    where = torch.tensor([[False, True, False, True, False]])
    torch.testing.assert_close(model(a, where), model(a)[where])      # the head at the masked positions only


def _corpus(tmp_path):
    lines = [f"w{i} is v{i} .\tx{i} y{i} z{i} ." for i in range(8)]
    path = tmp_path / "pairs.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_train_a_tiny_masked_lm_then_fill_mask(tmp_path):
    out = tmp_path / "mlm"
    res = run("train", *TINY, "--corpus", _corpus(tmp_path), "--steps", "200", "--eval-every", "200", "--out", out)
    assert res.exit_code == 0, res.output
    assert "stopped at step 200 (reached --steps)" in res.stdout
    assert "training: masked-token accuracy" in res.stdout                 # --heldout 0: the training split
    loaded = checkpoint.load(out)
    assert loaded.config.arch == "encoder-only" and loaded.source_vocab.level == "word"   # word tokens by default
    assert loaded.source_vocab.tokens[MASK_ID] == MASK
    last = loaded.meta["metrics"]
    assert last["masked_accuracy"] > 0.8, last
    top = fill_mask(loaded.model, loaded.source_vocab, "w3 is [MASK] .", top_k=3)
    assert top[0][0][0] == "v3" and 0.5 < top[0][0][1] <= 1.0
    assert [p for _, p in top[0]] == sorted((p for _, p in top[0]), reverse=True)
    res = run("fill-mask", "--checkpoint", out, "w5 is [MASK] .", "--top-k", "2", env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    first = res.stdout.splitlines()[0].split()
    assert first[0] == "v5" and first[1].endswith("%") and len(res.stdout.splitlines()) == 2
    res = run("fill-mask", "-c", out, "[MASK] y7 z7 .", "-k", "1")
    assert res.exit_code == 0 and res.stdout.split()[0] == "x7"
    res = run("fill-mask", "-c", out, "[MASK] y7 [MASK] .", "-k", "3")       # each gap answered on its own
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert [lines[0], lines[4]] == ["[MASK] 1:", "[MASK] 2:"] and len(lines) == 8
    assert all(line.startswith("  ") and line.endswith("%") for line in lines[1:4] + lines[5:])
    for command in (["translate", "-c", out, "w1 is"], ["attention-map", "-c", out, "w1 is", "--kind", "encoder"]):
        res = run(*command)               # a masked LM does not translate: one line, not a traceback
        assert res.exit_code == 2 and "is a masked LM (encoder-only)" in res.stderr
        assert len(res.stderr.splitlines()) == 1
    res = run("fill-mask", "-c", out, "w1 is [MASK] qqq")
    assert res.exit_code == 0 and res.stderr == "warning: words this model never saw, read as unknown: 'qqq'\n"


def test_masked_lm_runs_resume_where_they_stopped(tmp_path):
    corpus = _corpus(tmp_path)
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert run("train", *TINY, "--corpus", corpus, "--steps", "20", "--eval-every", "10", "--out", straight).exit_code == 0
    assert run("train", *TINY, "--corpus", corpus, "--steps", "10", "--eval-every", "10", "--out", resumed).exit_code == 0
    res = run("train", "--steps", "20", "--out", resumed, "--resume", "--threads", "1")   # arch and objective kept
    assert res.exit_code == 0, res.output
    a, b = checkpoint.load(straight).model.state_dict(), checkpoint.load(resumed).model.state_dict()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6)


def test_bad_objectives_and_fill_mask_input_are_one_line_before_any_work(tmp_path):
    for args, said in [(["--objective", "mlm"], "--objective mlm needs --arch encoder-only"),
                       (["--objective", "mlm", "--arch", "decoder-only"], "which a decoder-only model's causal decoder"),
                       (["--objective", "mlm", "--arch", "rnn-seq2seq"], "which an rnn-seq2seq model's causal decoder"),
                       (["--objective", "mlm", "--arch", "encoder-decoder"],
                        "which an encoder-decoder model's causal decoder"),
                       (["--arch", "encoder-only"], "add --objective mlm"),
                       (["--arch", "encoder-only", "--objective", "clm"], "is not one of seq2seq, mlm")]:
        res = run("train", *args, "--out", tmp_path / "never")
        assert res.exit_code == 2 and said in res.stderr and len(res.stderr.splitlines()) == 1, res.output
        assert not (tmp_path / "never").exists()
    out = tmp_path / "s2s"
    assert run("train", "--task", "reverse", "--d-model", "16", "--heads", "2", "--d-ff", "16", "--batch-tokens",
               "200", "--eval-size", "10", "--steps", "1", "--out", out).exit_code == 0
    res = run("fill-mask", "-c", out, "a [MASK] c")
    assert res.exit_code == 2 and "fill-mask needs a masked LM" in res.stderr and len(res.stderr.splitlines()) == 1
    assert "is an encoder-decoder model" in res.stderr, res.stderr
    for text, said in [("no gap here", "TEXT has no [MASK]"), ("[MASK]", "--top-k: expected a count from 1 to 100")]:
        res = run("fill-mask", "-c", out, text, *(["--top-k", "0"] if text == "[MASK]" else []))
        assert res.exit_code == 2 and said in res.stderr and len(res.stderr.splitlines()) == 1, res.output
