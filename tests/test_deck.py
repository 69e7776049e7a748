"""`examprep anki`: the deck is imported by Anki's own library (the `anki` package, a dev dependency)
into a throw-away collection, and what arrives is counted and read back; a re-export updates the
notes already there instead of adding copies."""
import html
from pathlib import Path
import re

import anki.collection as anki_collection   # Anki's own library: a dev dependency, never skipped
import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.deck import build_package, split_names, write_deck
from examprep.sources.concepts import packaged_bank

runner = CliRunner()
T0 = 1_767_225_600.0          # 2026-01-01, the notes' modification time of a first export


def collection(tmp_path):
    return anki_collection.Collection(str(tmp_path / "collection.anki2"))


def import_deck(col, path):
    """Import an .apkg as Anki's File › Import does by default (update a note when the file's is newer)."""
    req = anki_collection.ImportAnkiPackageRequest(
        package_path=str(path),
        options=anki_collection.ImportAnkiPackageOptions(merge_notetypes=True, with_scheduling=False,
                                                         with_deck_configs=False))
    return col.import_anki_package(req).log


def test_anki_imports_every_concept_and_problem_as_one_card_each(tmp_path):
    out = tmp_path / "examprep.apkg"
    summary = write_deck(out, topics=["gru-step", "network-shapes"], sections=["rnn", "attention"], problems=3, now=T0)
    bank = packaged_bank()
    expected_concepts = sum(1 for q in bank.questions.values() if q.topic in ("rnn", "attention"))
    assert summary.concepts == {"rnn": sum(q.topic == "rnn" for q in bank.questions.values()),
                                "attention": sum(q.topic == "attention" for q in bank.questions.values())}
    assert summary.problems == {"gru-step": 3, "network-shapes": 3}
    col = collection(tmp_path)
    try:
        log = import_deck(col, out)
        assert len(log.new) == expected_concepts + 6 and not log.duplicate
        assert col.note_count() == expected_concepts + 6
        assert col.card_count() == expected_concepts + 6          # one card per note
        names = {d.name for d in col.decks.all_names_and_ids()}
        assert {"examprep::Concepts::rnn", "examprep::Concepts::attention", "examprep::Problems::gru-step",
                "examprep::Problems::network-shapes"} <= names
        assert len(col.find_notes('"note:examprep concept"')) == expected_concepts
        assert len(col.find_notes('"note:examprep problem"')) == 6
        assert len(col.find_notes("tag:examprep::level::1")) == 2 and len(col.find_notes("tag:examprep::level::3")) == 2
        # a concept's back: the answer, the explanation and the verbatim source from the bank
        q = bank.questions["gru-gate-count"]
        note = col.get_note(col.find_notes("Id:gru-gate-count")[0])
        assert note["Answer"] == "2" and q.explanation[:40] in note["Explanation"]
        assert q.source.lecture in note["Source"] and html.escape(q.source.quote, quote=False) in note["Source"]
        # a problem's math uses MathJax's delimiters, never $…$; its answers are on the back
        note = col.get_note(col.find_notes("Id:gru-step/d1/s0")[0])
        assert "\\(" in note["Problem"] and "\\[" in note["Solution"] and "$" not in note["Problem"] + note["Solution"]
        assert "h_new" in note["Answers"] and "examprep generate gru-step -d 1 -s 0" in note["Origin"]
        card = col.get_card(col.find_cards("Id:gru-step/d1/s0")[0])
        assert "Work it out on paper" in card.question() and "Worked solution" in card.answer()
    finally:
        col.close()


def test_a_re_export_updates_the_notes_instead_of_duplicating_them(tmp_path, monkeypatch):
    first, second = tmp_path / "first.apkg", tmp_path / "second.apkg"
    write_deck(first, topics=["softmax-cross-entropy"], sections=["llm"], problems=2, now=T0)
    col = collection(tmp_path)
    try:
        import_deck(col, first)
        notes_before, cards_before = col.note_count(), col.card_count()
        card_ids = set(col.find_cards("deck:examprep"))
        # the next examprep revises an explanation; the student also asks for one more problem per topic
        from examprep.render import anki as cards

        original = cards.concept_fields

        def revised(concept):
            fields = original(concept)
            fields[2] += "<p>(revised)</p>"
            return fields

        monkeypatch.setattr(cards, "concept_fields", revised)
        write_deck(second, topics=["softmax-cross-entropy"], sections=["llm"], problems=3, now=T0 + 3600)
        log = import_deck(col, second)
        assert len(log.new) == 1                                   # the third problem only
        assert len(log.updated) == notes_before                    # every note already there, in place
        assert col.note_count() == notes_before + 1 and col.card_count() == cards_before + 1
        assert card_ids <= set(col.find_cards("deck:examprep"))   # the same cards, so their review history stays
        assert len(col.find_notes("Explanation:*(revised)*")) == notes_before - 2
        # importing the same file again changes nothing
        again = import_deck(col, second)
        assert not again.new and col.note_count() == notes_before + 1
    finally:
        col.close()


def test_note_guids_depend_on_what_a_note_is_not_on_when_it_was_built():
    a, _ = build_package(topics=["attention"], sections=["transformer"], problems=2)
    b, _ = build_package(topics=["attention", "rnn-step"], sections=["transformer", "rnn"], problems=3)
    guids_a = {n.guid for d in a.decks for n in d.notes}
    guids_b = {n.guid for d in b.decks for n in d.notes}
    assert len(guids_a) == sum(len(d.notes) for d in a.decks)      # all distinct
    assert guids_a < guids_b                                        # the smaller deck's notes reappear as they were
    other_seed, _ = build_package(topics=["attention"], sections=["none"], problems=2, seed=10)
    assert not {n.guid for d in other_seed.decks for n in d.notes} & guids_a   # other problems, other notes


def test_levels_cycle_unless_one_is_given_and_seeds_count_up():
    pkg, summary = build_package(topics=["gru-step"], sections=["none"], problems=4, seed=5)
    ids = [n.fields[-1] for d in pkg.decks for n in d.notes]
    assert ids == ["gru-step/d1/s5", "gru-step/d2/s6", "gru-step/d3/s7", "gru-step/d1/s8"]
    pkg, summary = build_package(topics=["gru-step"], sections=["none"], problems=2, difficulty=2)
    assert [n.fields[-1] for d in pkg.decks for n in d.notes] == ["gru-step/d2/s0", "gru-step/d2/s1"]
    assert summary.levels == {2}


def test_calculator_free_variants_where_a_topic_has_them():
    pkg, _ = build_package(topics=["softmax-cross-entropy", "rope"], sections=["none"], problems=1, calculator_free=True)
    assert [n.fields[-1] for d in pkg.decks for n in d.notes] == ["softmax-cross-entropy/d1/s0/cf", "rope/d1/s0"]
    cf = pkg.decks[0].notes[0]
    assert "--calculator-free" in cf.fields[3]


def test_choice_concepts_show_their_choices_and_name_the_right_one():
    from examprep.sources.concepts import concept_problem
    from examprep.render.moodle import _math_text

    pkg, _ = build_package(sections=["transformer", "attention"], problems=0)
    bank = packaged_bank()
    choices = [q for q in bank.questions.values() if q.topic in ("transformer", "attention") and q.kind == "choice"]
    letters = set()
    for q in choices:
        note = next(n for d in pkg.decks for n in d.notes if n.fields[-1] == q.id)
        assert note.fields[0].count("<li>") == len(q.choices)
        # the order the quiz shows at seed 0: the same letter is right in Anki and in `examprep quiz`
        quiz = concept_problem(q, seed=0)
        assert note.fields[1].startswith(f"{quiz.parts[0].expected})")
        assert _math_text(q.choices[q.answer]) in note.fields[1]          # the right choice, spelled out
        letters.add(quiz.parts[0].expected)
        assert not re.search(r"\$[^$]+\$", note.fields[0] + note.fields[2])      # $…$ became \( … \)
    assert len(letters) > 1            # the bank writes the right answer first; the cards must not


def test_split_names_accepts_commas_and_repeats():
    assert split_names(["a,b", "c", "a", " d , "]) == ["a", "b", "c", "d"]


def test_the_command_writes_a_deck_and_says_what_is_in_it(tmp_path):
    out = tmp_path / "deck.apkg"
    res = runner.invoke(app, ["anki", "--out", str(out), "--topics", "gru-step,rnn-step", "--problems", "2",
                              "--sections", "rnn"])
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 0
    assert f"wrote {out}" in res.output and "4 worked problems: 2 for each of 2 topics" in res.output
    assert "concept cards in 1 section (rnn)" in res.output


@pytest.mark.parametrize("args, message", [
    (["--problems", "-1"], "--problems: expected 0 to 50"),
    (["--problems", "51"], "--problems: expected 0 to 50"),
    (["--topics", "gru-stp"], "unknown topic 'gru-stp'; did you mean gru-step"),
    (["--topics", "attention-from-model"], "needs a trained model"),
    (["--sections", "rnn,optics"], "--sections: unknown concept section 'optics'"),
    (["--difficulty", "4"], "--difficulty: expected 1, 2 or 3"),
    (["--problems", "0", "--sections", "none"], "nothing to export"),
    (["--seed", "-3"], "--seed: expected a non-negative integer"),
    (["--topics", ""], "--topics: an empty list; give topic names"),
    (["--topics", " , "], "--topics: an empty list"),
    (["--sections", ""], "--sections: an empty list; give some of rnn"),
    (["--topics", "RNN-STEP"], "unknown topic 'RNN-STEP'; did you mean rnn-step?"),
])
def test_bad_options_are_one_line_exit_2_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "deck.apkg"
    res = runner.invoke(app, ["anki", "--out", str(out), *args])
    assert res.exit_code == 2, res.output
    assert message in res.output and res.output.count("\n") == 1 and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize("out, message", [
    ("deck.txt", "--out deck.txt: an Anki deck is a .apkg file (Anki imports no other); e.g. --out deck.apkg"),
    ("deck", "--out deck: an Anki deck is a .apkg file (Anki imports no other); e.g. --out deck.apkg"),
    ("", "--out: the path is empty; give the deck's file, e.g. --out examprep.apkg"),
])
def test_an_out_path_that_is_not_an_apkg_is_refused_before_any_work(tmp_path, monkeypatch, out, message):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["anki", "--out", out, "--problems", "0"])
    assert res.exit_code == 2 and res.output.strip() == f"error: {message}", res.output
    assert list(tmp_path.iterdir()) == []


def test_an_existing_deck_needs_force_and_a_missing_directory_is_named(tmp_path):
    out = tmp_path / "deck.apkg"
    out.write_bytes(b"old")
    res = runner.invoke(app, ["anki", "--out", str(out), "--problems", "0", "--sections", "llm"])
    assert res.exit_code == 2 and "already exists; use --force" in res.output and out.read_bytes() == b"old"
    res = runner.invoke(app, ["anki", "--out", str(out), "--problems", "0", "--sections", "llm", "--force"])
    assert res.exit_code == 0 and out.read_bytes()[:2] == b"PK"          # a zip, as .apkg files are
    res = runner.invoke(app, ["anki", "--out", str(tmp_path / "nowhere" / "d.apkg"), "--problems", "0"])
    assert res.exit_code == 2 and "does not exist; create it first" in res.output


def test_problem_cards_carry_the_figures_their_solutions_draw():
    pkg, _ = build_package(topics=["receptive-field", "attention"], sections=["none"], problems=1)
    receptive, attention = (d.notes[0] for d in pkg.decks)
    assert "Receptive field of the middle output" in receptive.fields[1] and "Span at the input" in receptive.fields[1]
    assert "darker = larger" in attention.fields[1]            # the attention weights as a shaded table
    assert "background:rgb(" in attention.fields[1]


QUESTION_FILE = Path(__file__).resolve().parents[1] / "examprep" / "bank" / "questions" / "softmax-by-hand.toml"


def test_a_question_file_goes_in_a_deck_where_a_topic_does(tmp_path):
    out = tmp_path / "deck.apkg"
    res = runner.invoke(app, ["anki", "--out", str(out), "--topics", f"{QUESTION_FILE},gru-step", "--problems", "2",
                              "--sections", "none", "--seed", "4"])
    assert res.exit_code == 0, res.output
    assert "4 worked problems: 2 for each of 2 topics" in res.output
    col = collection(tmp_path)
    try:
        import_deck(col, out)
        assert "examprep::Problems::question:softmax-by-hand" in {d.name for d in col.decks.all_names_and_ids()}
        note = col.get_note(col.find_notes("Id:question:softmax-by-hand/d1/s5")[0])
        assert "Softmax of three logits" in note["Problem"] and "examprep generate softmax-by-hand.toml -s 5" in note["Origin"]
        assert len(col.find_notes("tag:examprep::problem::gru-step")) == 2
    finally:
        col.close()


@pytest.mark.parametrize("topics, message", [
    ("missing.toml", "missing.toml"),                                   # a question file that is not there: named
    ("attention-from-model", "examprep anki cannot take one; use `examprep generate attention-from-model --checkpoint"),
])
def test_a_bad_question_file_or_a_model_problem_is_one_line(tmp_path, topics, message):
    out = tmp_path / "deck.apkg"
    res = runner.invoke(app, ["anki", "--out", str(out), "--topics", topics, "--sections", "none"])
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output
    assert not out.exists()


def test_a_rebuild_is_byte_identical(tmp_path, monkeypatch):
    """Two builds from the same sources are the same bytes (genanki's ids and times, the zip's entry
    times), with the default time (the sources' newest) and with SOURCE_DATE_EPOCH; Anki imports the
    result with that modification time."""
    import time as clock

    first, second = tmp_path / "first.apkg", tmp_path / "second.apkg"
    write_deck(first, topics=["softmax-cross-entropy"], sections=["llm"], problems=1)
    real = clock.time
    monkeypatch.setattr(clock, "time", lambda: real() + 86_400)   # a day later, by the clock
    write_deck(second, topics=["softmax-cross-entropy"], sections=["llm"], problems=1)
    assert first.read_bytes() == second.read_bytes()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(T0)))
    write_deck(first, topics=["softmax-cross-entropy"], sections=["llm"], problems=1, force=True)
    write_deck(second, topics=["softmax-cross-entropy"], sections=["llm"], problems=1, force=True)
    assert first.read_bytes() == second.read_bytes()
    col = collection(tmp_path)
    try:
        import_deck(col, first)
        mods = {col.get_note(n).mod for n in col.find_notes("deck:examprep")}
        assert mods == {int(T0)}
    finally:
        col.close()
