"""--tokens bpe: subword vocabularies learned with HuggingFace `tokenizers` (examprep.checkpoints.bpe),
saved in the run, checked when loaded, used by translate and evaluation (issue 40, item 7).

Independent checks: the pieces are those of BPE as Sennrich et al. define it, applied here from the
saved merges by a few lines of the test (not by the library); the saved file is read back by
`tokenizers.Tokenizer.from_file` itself; the decode round trip is a hypothesis property.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from examprep.checkpoints.bpe import FILES, BPEVocab, prepare
from examprep.checkpoints.errors import CheckpointError, ConfigError
from examprep.checkpoints.vocab import EOS, SPECIALS, UNK, Vocab
from examprep.cli import app
from examprep.train import checkpoint
from examprep.train.data import corpus_vocabs, split_heldout
from examprep.train.options import TrainOptions
from examprep.train.trainer import train

from .helpers import PYTHON, REPO, TATOEBA, small_config

pytest.importorskip("tokenizers", reason="--tokens bpe needs the tokenizers extra: pip install -e '.[tokenizers]'")

# a tiny French-English corpus written here: repeated words, so that BPE has pairs to merge
PAIRS = [("Je suis fatigué.", "I'm tired."), ("Tu es fatigué ?", "Are you tired?"),
         ("Nous sommes partis.", "We left."), ("Il est parti !", "He left!"), ("Elle est là.", "She's here."),
         ("Je suis là.", "I'm here."), ("Où est-il ?", "Where is he?"), ("Nous avons gagné.", "We won."),
         ("Tu as gagné !", "You won!"), ("Il a gagné.", "He won."), ("Elle est fatiguée.", "She's tired."),
         ("Vous êtes partis ?", "Did you leave?")]
TEXTS = [t for p in PAIRS for t in p]
ALPHABET = sorted(set("".join(prepare(t) for t in TEXTS)) - {" "})
HELDOUT = 0.25


def write_corpus(path, pairs=PAIRS):
    path.write_text("".join(f"{en}\t{fr}\tCC-BY 2.0 (France)\n" for fr, en in pairs), encoding="utf-8")
    return path


def reference_bpe(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """BPE as Sennrich et al. (2016) apply it to one word: its characters, then again and again the
    adjacent pair whose merge was learned first is joined, until no learned pair is left."""
    rank = {m: r for r, m in enumerate(merges)}
    pieces = list(word)
    while len(pieces) > 1:
        ranked = [(rank[p], i) for i, p in enumerate(zip(pieces, pieces[1:])) if p in rank]
        if not ranked:
            break
        _, i = min(ranked)
        pieces[i:i + 2] = [pieces[i] + pieces[i + 1]]
    return pieces


@pytest.fixture(scope="module")
def vocab() -> BPEVocab:
    return BPEVocab.train(TEXTS, 80)


@pytest.fixture(scope="module")
def bpe_run(tmp_path_factory):
    """A tiny encoder-decoder trained for 8 steps on BPE tokens (one vocabulary, --share all)."""
    root = tmp_path_factory.mktemp("bpe")
    corpus = write_corpus(root / "fr-en.tsv")
    result = train(TrainOptions(corpus=str(corpus), swap=True, tokens="bpe", bpe_vocab=60, heldout=HELDOUT,
                                d_model=32, layers=1, heads=4, d_ff=64, steps=8, eval_every=8, threads=1,
                                out=str(root / "run")))
    return result, corpus


# ------------------------------------------------------------------ the vocabulary itself

def test_two_trainings_give_byte_identical_files_under_any_hash_seed(vocab):
    again = BPEVocab.train(list(reversed(TEXTS)), 80)          # another order of the same corpus, too
    assert again.text.encode("utf-8") == vocab.text.encode("utf-8")
    code = ("import sys; from examprep.checkpoints.bpe import BPEVocab; import json; "
            "print(BPEVocab.train(json.loads(sys.argv[1]), 80).sha256)")
    procs = [subprocess.Popen([PYTHON, "-c", code, json.dumps(TEXTS)], stdout=subprocess.PIPE, text=True, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": seed,
                                   "RAYON_NUM_THREADS": seed})
             for seed in ("1", "2")]
    digests = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert digests == [hashlib.sha256(vocab.text.encode("utf-8")).hexdigest()] * 2


def test_the_file_is_a_tokenizer_json_that_tokenizers_reads_with_the_specials_first(vocab, tmp_path):
    from tokenizers import Tokenizer

    path = tmp_path / "tokenizer.json"
    path.write_text(vocab.text, encoding="utf-8")
    theirs = Tokenizer.from_file(str(path))
    assert vocab.tokens[:len(SPECIALS)] == list(SPECIALS) and len(vocab) == theirs.get_vocab_size() == 80
    text = "Nous sommes fatigués ! <eos>"
    assert theirs.encode(text).ids == vocab.encode(text)
    assert EOS not in vocab.encode(text)                     # a typed "<eos>" is characters, not the end


def test_the_pieces_are_bpe_applied_by_the_merges_in_their_order(vocab):
    merges = [tuple(m) for m in json.loads(vocab.text)["model"]["merges"]]

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=12), min_size=1, max_size=4))
    def check(words):
        expected = [p for w in words for p in reference_bpe("▁" + w, merges)]
        assert vocab.tokenize(" ".join(words)) == expected

    check()


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=ALPHABET + [" ", "\t", "\n", "\u00a0", "▁"], max_size=40))
def test_any_text_in_the_corpus_alphabet_decodes_to_itself_normalised(vocab, text):
    ids = vocab.encode(text)
    assert UNK not in ids
    assert vocab.decode(ids) == prepare(text) == " ".join(text.replace("▁", " ").split())


@pytest.mark.skipif(not TATOEBA.exists(), reason=f"{TATOEBA} is absent (../shared is not beside this clone)")
def test_every_tatoeba_sentence_decodes_to_itself():
    from examprep.train.data import read_corpus

    pairs = read_corpus(TATOEBA, swap=True).pairs
    source, target = corpus_vocabs(pairs, "bpe", joint=False, bpe_vocab=1000)
    for vocab, texts in ((source, [s for s, _ in pairs]), (target, [t for _, t in pairs])):
        ids = [vocab.encode(t) for t in texts]
        assert [vocab.decode(i) for i in ids] == texts and all(UNK not in i for i in ids)
        assert sum(map(len, ids)) < sum(len(t.split()) for t in texts) * 2     # subwords: under 2 per word


def test_an_unseen_character_is_unknown_and_named_as_itself(vocab):
    assert vocab.encode("Je ❤")[-1] == UNK
    assert vocab.tokenize("Je ❤")[-1] == "❤" and "❤" not in vocab.index
    assert vocab.decode(vocab.encode("Je ❤ .")) == "Je <unk> ."


def test_shared_sides_get_one_vocabulary_and_unshared_two():
    one = corpus_vocabs(PAIRS, "bpe", joint=True, bpe_vocab=70)
    assert one[0] is one[1] and one[0].file == FILES["joint"]
    src, tgt = corpus_vocabs(PAIRS, "bpe", joint=False, bpe_vocab=70)
    assert (src.file, tgt.file) == (FILES["source"], FILES["target"])
    assert "é" in src.index and "é" not in tgt.index          # each side learned from its own column


def test_too_small_a_vocabulary_is_one_line():
    with pytest.raises(ConfigError, match="--bpe-vocab must be at least 6"):
        BPEVocab.train(TEXTS, 5)


# ------------------------------------------------------------------ a run with BPE tokens

def test_the_run_saves_the_tokenizer_and_records_its_hash(bpe_run):
    result, _ = bpe_run
    step = checkpoint.latest(result.run_dir)
    meta = json.loads((step / "config.json").read_text(encoding="utf-8"))
    vocabs = json.loads((step / "vocab.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256((step / "tokenizer.json").read_bytes()).hexdigest()
    assert meta["files"]["tokenizer.json"] == vocabs["source"]["sha256"] == vocabs["target"]["sha256"] == digest
    assert vocabs["source"] == {"level": "bpe", "file": "tokenizer.json", "sha256": digest, "size": 60}
    loaded = checkpoint.load(result.run_dir)
    assert isinstance(loaded.source_vocab, BPEVocab) and loaded.source_vocab == loaded.target_vocab
    assert "bleu" in result.evals[-1]                      # evaluated on the detokenized outputs


def test_bpe_is_learned_from_the_training_pairs_only(bpe_run, tmp_path):
    _, corpus = bpe_run
    train_pairs, heldout = split_heldout(PAIRS, round(1000 * HELDOUT))
    assert heldout and train_pairs
    loaded = checkpoint.load(bpe_run[0].run_dir)
    assert loaded.source_vocab == corpus_vocabs(train_pairs, "bpe", joint=True, bpe_vocab=60)[0]
    assert loaded.source_vocab != corpus_vocabs(train_pairs + heldout, "bpe", joint=True, bpe_vocab=60)[0]


def test_translate_reads_a_bpe_run(bpe_run):
    result, _ = bpe_run
    res = CliRunner().invoke(app, ["translate", "--checkpoint", str(result.run_dir), "Je suis là.", "Il a ❤."])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and all("▁" not in line and "<" not in line for line in lines)
    assert "has characters this model never saw, read as unknown: '❤'" in res.stderr


def test_a_foreign_tokenizer_file_is_refused_in_one_line(bpe_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(bpe_run[0].run_dir, run)
    step = checkpoint.latest(run)
    (step / "tokenizer.json").write_text(BPEVocab.train(TEXTS, 60).text, encoding="utf-8")
    with pytest.raises(CheckpointError) as err:
        checkpoint.load(run)
    assert "tokenizer.json changed after it was written" in str(err.value) and "\n" not in str(err.value)
    meta = json.loads((step / "config.json").read_text(encoding="utf-8"))
    del meta["files"]                                      # no hashes in config.json: vocab.json's still holds
    (step / "config.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(CheckpointError, match="tokenizer.json does not belong to this checkpoint") as err:
        checkpoint.load(run)
    assert "\n" not in str(err.value)
    (step / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match="tokenizer is missing"):
        checkpoint.load(run)


def test_resume_keeps_the_tokenizer_and_unshared_sides_get_two_files(bpe_run, tmp_path):
    result, corpus = bpe_run
    run = tmp_path / "resumed"
    shutil.copytree(result.run_dir, run)
    before = (checkpoint.latest(run) / "tokenizer.json").read_bytes()
    train(TrainOptions(out=str(run), resume=True, steps=9, threads=1))
    assert (checkpoint.latest(run).name, (checkpoint.latest(run) / "tokenizer.json").read_bytes()) == \
        ("step-000009", before)
    apart = train(TrainOptions(corpus=str(corpus), swap=True, tokens="bpe", bpe_vocab=50, share="none", heldout=0.0,
                               d_model=32, layers=1, heads=4, d_ff=64, steps=1, eval_every=1, threads=1,
                               out=str(tmp_path / "apart")))
    loaded = checkpoint.load(apart.run_dir)
    assert (loaded.source_vocab.file, loaded.target_vocab.file) == (FILES["source"], FILES["target"])
    assert loaded.source_vocab != loaded.target_vocab and len(loaded.source_vocab) == len(loaded.target_vocab) == 50


def test_a_char_checkpoint_is_written_and_read_as_before(tmp_path):
    from examprep.train.model import build_model

    chars = Vocab(list(SPECIALS) + list("abcdefghijklmnopqr"), "char")
    step = checkpoint.save(tmp_path / "run", 1, build_model(small_config()), chars, chars, {"data": {}})
    assert sorted(p.name for p in step.iterdir()) == ["config.json", "model.safetensors", "vocab.json"]
    assert json.loads((step / "vocab.json").read_text(encoding="utf-8"))["source"] == \
        {"level": "char", "tokens": chars.tokens}
    assert checkpoint.load(step).source_vocab == chars


# ------------------------------------------------------------------ the command line

def test_bpe_without_tokenizers_is_refused_before_torch_loads(tmp_path):
    corpus = write_corpus(tmp_path / "fr-en.tsv")
    code = ("import sys; sys.modules['tokenizers'] = None; from typer.testing import CliRunner; "
            "from examprep.cli import app; "
            f"res = CliRunner().invoke(app, ['train', '--corpus', {str(corpus)!r}, '--tokens', 'bpe']); "
            "print(res.exit_code, 'torch' in sys.modules); print(res.output, end='')")
    res = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.stdout.splitlines() == [
        "2 False", "error: --tokens bpe needs the tokenizers library (tokenizers is missing): install it with "
                   "pip install -e '.[tokenizers]'"], res.stderr


@pytest.mark.parametrize("args, message", [
    (["--tokens", "word", "--bpe-vocab", "500"], "--bpe-vocab 500 sizes a BPE vocabulary: it needs --tokens bpe"),
    (["--task", "reverse", "--tokens", "bpe"], "--tokens bpe learns its subwords from a corpus"),
    (["--tokens", "bpe", "--arch", "encoder-only", "--objective", "mlm"], "--tokens bpe is for the translation models"),
    (["--tokens", "bpe", "--bpe-vocab", "3"], "--bpe-vocab must be at least 6"),
])
def test_options_that_do_not_fit_bpe_are_one_line(tmp_path, args, message):
    corpus = [] if "--task" in args else ["--corpus", str(write_corpus(tmp_path / "fr-en.tsv"))]
    res = CliRunner().invoke(app, ["train", *corpus, *args, "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and message in res.output and len(res.output.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "run").exists()
