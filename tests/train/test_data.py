"""Built-in tasks, vocabularies, corpora and batches."""
from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given, strategies as st

from examprep.train.data import (
    BOS, EOS, PAD, SEP, TASKS, CorpusStream, TaskStream, Vocab, collate, get_task, make_example,
    read_corpus, split_heldout, task_vocab,
)
from examprep.checkpoints.errors import ConfigError, CorpusError

# Every source format of `dates`, as strptime patterns (an independent reading of the sources).
STRPTIME = ["%d %b %Y", "%d %B %Y", "%B %d, %Y", "%b %d, %Y", "%d/%m/%Y", "%d.%m.%Y", "%Y/%m/%d",
            "%A, %d %B %Y", "%a, %d %b %Y", "%B %d %Y"]


WEEKDAYS = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}


def _parse_date(text: str) -> dt.date:
    for pattern in STRPTIME:
        try:
            return dt.datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    raise AssertionError(f"no pattern reads {text!r}")


def test_dates_targets_are_the_iso_form_of_their_sources():
    rng = random.Random(7)
    task = get_task("dates")
    for _ in range(3000):
        source, target = task.draw(rng)
        parsed = _parse_date(source)
        assert parsed.isoformat() == target
        if source[:3] in WEEKDAYS:                                       # strptime ignores weekdays
            assert source.startswith(parsed.strftime("%a"))


def test_dates_cover_the_formats_of_the_issue():
    rng = random.Random(0)
    task = get_task("dates")
    day = dt.date(2026, 11, 29)
    rendered = {f(day) for f in task.formats}
    assert {"29 Nov 2026", "November 29, 2026", "29/11/2026"} <= rendered
    seen = {_shape(task.draw(rng)[0]) for _ in range(2000)}
    assert len(seen) >= 10                                              # every format is drawn


def _shape(text: str) -> str:
    return "".join("9" if c.isdigit() else ("a" if c.isalpha() else c) for c in text)


@pytest.mark.parametrize("name,fn", [("reverse", lambda s: s[::-1]), ("sort", lambda s: "".join(sorted(s))),
                                     ("copy", lambda s: s)])
def test_string_tasks_map_their_sources(name, fn):
    rng = random.Random(1)
    for _ in range(200):
        source, target = TASKS[name].draw(rng)
        assert 4 <= len(source) <= 16 and source.isalpha() and source.islower()
        assert target == fn(source)


@pytest.mark.parametrize("name", list(TASKS))
def test_training_never_draws_a_heldout_example(name):
    task = TASKS[name]
    heldout = task.heldout_pairs(300, seed=0)
    keys = {task.key(*p) for p in heldout}
    assert len(keys) == 300 and all(task.is_heldout(*p) for p in heldout)
    rng = random.Random(3)
    drawn = [task.train_pair(rng) for _ in range(5000)]
    assert not keys & {task.key(*p) for p in drawn}
    assert not any(task.is_heldout(*p) for p in drawn)


def test_task_batches_are_a_function_of_seed_and_step():
    task = get_task("dates")
    vocab = task_vocab(task)
    a = TaskStream(task, vocab, "encoder-decoder", 2000, seed=5)
    b = TaskStream(task, vocab, "encoder-decoder", 2000, seed=5)
    c = TaskStream(task, vocab, "encoder-decoder", 2000, seed=6)
    assert a.examples(17) == b.examples(17)
    assert a.examples(17) != a.examples(18)
    assert a.examples(17) != c.examples(17)
    assert task.heldout_pairs(50, 0) == task.heldout_pairs(50, 0) != task.heldout_pairs(50, 1)
    tokens = sum(e.n_tokens for e in a.examples(1))
    assert 1500 < tokens < 2500                                         # about --batch-tokens


def test_unknown_task_names_the_choices():
    with pytest.raises(ConfigError, match="dates, dates-dmy, reverse, sort, copy"):
        get_task("translate")


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), max_size=40))
def test_word_and_char_vocabularies_round_trip_normalized_text(text):
    normalized = " ".join(text.split())
    for level in ("char", "word"):
        vocab = Vocab.build([text], level)
        assert vocab.decode(vocab.encode(text)) == normalized


def test_word_tokens_keep_french_spacing_and_unknown_words_become_unk():
    vocab = Vocab.build(["Je suis si fatigué !", "Va !"], "word")
    assert vocab.tokenize("Je suis si fatigué !") == ["Je", " suis", " si", " fatigué", " !"]
    assert vocab.decode(vocab.encode("Va !")) == "Va !"
    ids = vocab.encode("Je suis content !")
    assert 3 in ids and vocab.decode(ids) == "Je suis<unk> !"


def test_vocabulary_rebuilds_from_its_dict():
    vocab = Vocab.build(["abc", "abd"], "char")
    assert Vocab.from_dict(vocab.to_dict()) == vocab
    assert vocab.tokens[:5] == ["<pad>", "<bos>", "<eos>", "<unk>", "<sep>"]
    with pytest.raises(ConfigError, match="must start with"):
        Vocab(["a", "b"], "char")


def test_examples_teach_the_target_and_eos_only():
    enc = make_example([7, 8, 9], [10, 11], "encoder-decoder")
    assert (enc.src, enc.inp, enc.out) == ([7, 8, 9, EOS], [BOS, 10, 11], [10, 11, EOS])
    dec = make_example([7, 8, 9], [10, 11], "decoder-only")
    assert dec.inp == [BOS, 7, 8, 9, SEP, 10, 11]
    assert dec.out == [PAD, PAD, PAD, PAD, 10, 11, EOS]                # position of <sep> predicts 10
    assert dec.n_targets == enc.n_targets == 3


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_lines_without_a_tab_are_skipped_and_named_by_line_number(tmp_path):
    path = _write(tmp_path, "c.tsv", "Go.\tVa !\tCC-BY\nno tab here\n\nHi.\tSalut !\nalso none\n\tSalut\nRun!\tCours !\n"
                  .encode())
    corpus = read_corpus(path)
    assert corpus.pairs == [("Go.", "Va !"), ("Hi.", "Salut !"), ("Run!", "Cours !")]
    assert corpus.skipped_no_tab == [2, 5]
    assert corpus.skipped_empty == [6]
    message = corpus.describe_skipped()
    assert "2 line(s) without a tab (line 2, 5)" in message and "1 line(s) with an empty" in message
    assert read_corpus(path, swap=True).pairs[0] == ("Va !", "Go.")


def test_a_bom_and_windows_line_ends_are_read(tmp_path):
    path = _write(tmp_path, "c.tsv", "\ufeffGo.\tVa !\r\nHi.\tSalut.\r\n".encode())
    assert read_corpus(path).pairs == [("Go.", "Va !"), ("Hi.", "Salut.")]


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"  \n\n", "is empty"),
    (b"only\nlines without\ntabs\n", "no 'source<TAB>target' line.*line 1, 2, 3"),
    ("Go.\tVa !\nCaf\u00e9\tx\n".encode("latin-1"), "line 2 is not UTF-8 \\(byte 0xe9\\)"),
])
def test_unreadable_corpora_are_clear_errors(tmp_path, content, message):
    with pytest.raises(CorpusError, match=message):
        read_corpus(_write(tmp_path, "bad.tsv", content))


def test_a_missing_corpus_or_a_directory_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match=r"^corpus .*nope.tsv: no such file$"):
        read_corpus(tmp_path / "nope.tsv")
    with pytest.raises(CorpusError, match=r"^corpus .*: a directory, not a file$"):
        read_corpus(tmp_path)


def test_heldout_split_keeps_every_translation_of_a_source_on_one_side():
    pairs = [(f"sentence {i % 40}", f"phrase {i}") for i in range(400)]
    train, heldout = split_heldout(pairs, 200)
    assert heldout and train
    assert not {s for s, _ in train} & {s for s, _ in heldout}
    assert sorted(train + heldout) == sorted(pairs)


def test_corpus_batches_fit_the_token_budget_and_visit_every_example_each_epoch():
    rng = random.Random(0)
    examples = [make_example([5] * rng.randint(1, 30), [6] * rng.randint(1, 30), "encoder-decoder")
                for _ in range(500)]
    stream = CorpusStream(examples, batch_tokens=600, seed=1)
    n = len(stream.batches)
    for batch in stream.batches:
        width = max(len(e.src) for e in batch) + max(len(e.inp) for e in batch)
        assert len(batch) == 1 or len(batch) * width <= 600
    epoch = [e for step in range(1, n + 1) for e in stream.examples(step)]
    assert sorted(map(id, epoch)) == sorted(map(id, examples))
    again = CorpusStream(examples, batch_tokens=600, seed=1)
    assert [again.examples(s) for s in range(1, 2 * n)] == [stream.examples(s) for s in range(1, 2 * n)]
    assert [stream.examples(s) for s in range(1, n + 1)] != [stream.examples(s) for s in range(n + 1, 2 * n + 1)]


def test_every_process_gets_examples_even_from_small_batches():
    examples = [make_example([5] * 40, [6] * 40, "encoder-decoder") for _ in range(9)]
    stream = CorpusStream(examples, batch_tokens=50, seed=0, min_examples=2)
    assert all(len(b) >= 2 for b in stream.batches)


def test_processes_share_one_global_batch():
    examples = [make_example([5] * n, [6] * (n + 1), "encoder-decoder") for n in range(1, 8)]
    whole = collate(examples)
    parts = [collate(examples, rank, 2) for rank in range(2)]
    assert whole.global_targets == parts[0].global_targets == parts[1].global_targets == sum(n + 2 for n in range(1, 8))
    assert parts[0].inp.shape[0] + parts[1].inp.shape[0] == whole.inp.shape[0]
    assert whole.src_padded and int((whole.src == PAD).sum()) > 0
    with pytest.raises(ConfigError, match="cannot be shared by 8 processes"):
        collate(examples, 7, 8)
