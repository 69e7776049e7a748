"""A question file's review card (issue 36, item 6): it remembers its file (path and SHA-256), is
reviewed from it while the file is there as it was, and a missing or changed file is named in
one line with the two ways out, `examprep review --relink CARD FILE` and `--drop CARD`."""
from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from datetime import datetime
from importlib import resources
from pathlib import Path

import fsrs
import pytest
from typer.testing import CliRunner

from examprep import review
from examprep.cli import app
from examprep.history import _MIGRATIONS, _split_sql, CardFile, History

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))
ITEM = "topic:question:softmax-by-hand"
CARD = "question:softmax-by-hand"
WEEKS_AGO = time.time() - 21 * 86400          # a card practised then is due today
SKIP_ALL = ["skip", "skip", "skip", ""]       # the question's three parts, then Enter


def run(args, lines=()):
    return runner.invoke(app, args, input="".join(f"{x}\n" for x in lines), env={"COLUMNS": "80"})


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def question(tmp_path):
    path = tmp_path / "mine" / "softmax.toml"
    path.parent.mkdir()
    path.write_bytes(SOFTMAX.read_bytes())
    return path


def due_card(path: Path, *, linked: bool = True) -> None:
    """The card as a quiz on ``path`` three weeks ago left it (due now)."""
    with History() as h:
        review.review(h, ITEM, 3, now=WEEKS_AGO, file=CardFile(str(path.resolve()), sha256(path)) if linked else None)


def stored():
    with History() as h:
        return {it: (js, n) for it, js, _due, n in h.cards()}, h.card_files(), h.attempts()


def test_a_quiz_on_a_question_file_links_its_card_to_the_file(question, monkeypatch):
    monkeypatch.chdir(question.parent.parent)
    before = time.time()
    res = run(["quiz", "--question", "mine/softmax.toml", "--seed", "1"], SKIP_ALL)
    assert res.exit_code == 0, res.output
    cards, files, _ = stored()
    assert list(cards) == [ITEM]
    link = files[ITEM]
    assert (link.path, link.sha256) == (str(question.resolve()), sha256(question))     # absolute, hashlib's own
    assert before <= link.linked <= time.time()


def test_an_exam_with_a_recipe_question_links_its_card_too(tmp_path):
    lora = SOFTMAX.parent / "explain-lora.toml"
    recipe = tmp_path / "exam.toml"
    recipe.write_text(f'[sheet]\ntitle = "W"\nminutes = 10\n[[problem]]\nquestion = "{lora}"\n')
    assert run(["quiz", "--exam", "--recipe", str(recipe), "--seed", "1"], ["", ""]).exit_code == 0
    assert stored()[1]["topic:question:explain-lora"].path == str(lora.resolve())


def test_a_due_question_card_is_reviewed_from_its_file(question):
    due_card(question)
    res = run(["review"], SKIP_ALL)
    assert res.exit_code == 0, res.output
    assert "Softmax of three logits" in res.output and "Review summary" in res.output
    assert "Not reviewed" not in res.output and "Skipping" not in res.output and "❓" not in res.output
    cards, files, attempts = stored()
    assert cards[ITEM][1] == 2                                    # reviewed again
    assert {(a.generator, a.mode) for a in attempts} == {("question:softmax-by-hand", "review")}
    assert files[ITEM].linked > WEEKS_AGO + 86400                # renewed by this review


def test_a_missing_question_file_is_named_in_one_line_with_the_ways_out(question):
    due_card(question)
    question.unlink()
    res = run(["review"])
    assert res.exit_code == 1
    when = datetime.fromtimestamp(WEEKS_AGO).strftime("%Y-%m-%d %H:%M")
    line = next(ln for ln in res.output.splitlines() if ln.startswith("Not reviewed"))
    assert line == (f"Not reviewed: {CARD}: {question.resolve()} is missing (last used {when}); "
                    f"`examprep review --relink {CARD} FILE` keeps its schedule for FILE, `--drop {CARD}` ends the card")
    assert stored()[0][ITEM][1] == 1                             # the card is left as it was


def test_a_question_file_that_cannot_be_read_is_named_with_the_reason(question):
    due_card(question)
    question.unlink()
    question.mkdir()
    res = run(["review"])
    assert res.exit_code == 1
    assert (f"Not reviewed: {CARD}: cannot be drawn: {question.resolve()}: a directory, not a question file; "
            f"`examprep review --relink {CARD} FILE`") in res.output


def test_a_changed_question_file_is_not_reviewed_until_it_is_relinked(question):
    due_card(question)
    cards_before = stored()[0]
    question.write_text(question.read_text().replace("Softmax of three logits", "Softmax, edited"))
    res = run(["review"])
    when = datetime.fromtimestamp(WEEKS_AGO).strftime("%Y-%m-%d %H:%M")
    assert res.exit_code == 1
    assert (f"Not reviewed: {CARD}: {question.resolve()} has changed since it was last used, {when} (its "
            f"schedule was earned on the old text); `examprep review --relink {CARD} {question.resolve()}` keeps its "
            f"schedule for the new text, `--drop {CARD}` ends the card") in res.output
    assert "Softmax, edited" not in res.output                  # the new text is not served on its own

    res = run(["review", "--relink", CARD, str(question)])
    assert res.exit_code == 0, res.output
    assert "is reviewed from" in res.output and "its schedule is kept" in res.output
    cards, files, _ = stored()
    assert cards == cards_before                                # the schedule is the one earned before
    assert files[ITEM].sha256 == sha256(question)
    res = run(["review"], SKIP_ALL)
    assert res.exit_code == 0 and "Softmax, edited" in res.output


def test_a_moved_question_file_is_relinked_to_its_new_place(question, tmp_path):
    due_card(question)
    moved = tmp_path / "moved here.toml"
    question.rename(moved)
    assert run(["review", "--relink", "topic:" + ITEM[6:], str(moved)]).exit_code == 0     # the item works too
    assert stored()[1][ITEM].path == str(moved.resolve())
    assert run(["review"], SKIP_ALL).exit_code == 0


def test_drop_takes_the_card_off_the_schedule_and_keeps_the_attempts(question):
    assert run(["quiz", "--question", str(question), "--seed", "1"], SKIP_ALL).exit_code == 0
    res = run(["review", "--drop", CARD])
    assert res.exit_code == 0 and f"Dropped {CARD} from the review schedule" in res.output
    cards, files, attempts = stored()
    assert cards == {} and files == {} and len(attempts) == 3
    assert "Nothing scheduled yet" in run(["review", "--due"]).output


@pytest.mark.parametrize("args, message", [
    (["review", "--drop", "softmax"], f"--drop: no card 'softmax' in the review schedule; did you mean {CARD}?"),
    (["review", "--relink", "attention", "{q}"], "--relink: attention is a built-in topic; only a question file's card"),
    (["review", "--relink", CARD, "{other}"], "holds question 'dense-by-hand', not 'softmax-by-hand'"),
    (["review", "--relink", CARD, "{q}.gone"], "softmax.toml.gone: no such file"),
    (["review", "--relink", CARD, "{q}", "--drop", CARD], f"--relink and --drop both name {CARD}"),
    (["review", "--due", "--drop", CARD], "--drop and --relink change the schedule: give them without --due"),
    (["review", "--optimize", "--drop", CARD], "separate uses of review"),
])
def test_bad_drop_and_relink_are_one_line_and_change_nothing(question, args, message):
    due_card(question)
    with History() as h:
        review.review(h, "topic:attention", 3, now=WEEKS_AGO)
    before = stored()
    other = SOFTMAX.parent / "dense-by-hand.toml"
    res = run([a.format(q=question, other=other) for a in args])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert stored() == before


def test_an_old_history_is_migrated_and_its_question_card_asks_for_its_file(home, question):
    """A history written before cards remembered their files (schema 2): it opens, keeps every
    card and attempt, and the question card is named until it is relinked."""
    home.mkdir()
    con = sqlite3.connect(home / "history.sqlite3")
    for v in (1, 2):                       # the schema an examprep of version 2 wrote
        for statement in _split_sql(_MIGRATIONS[v]):
            con.execute(statement)
    con.execute("PRAGMA user_version = 2")
    card = fsrs.Card(card_id=1, due=datetime.fromtimestamp(WEEKS_AGO).astimezone())
    con.execute("INSERT INTO cards (item, card, due, reviews, updated) VALUES (?, ?, ?, 1, ?)",
                (ITEM, card.to_json(), WEEKS_AGO, WEEKS_AGO))
    con.execute("INSERT INTO attempts (time, kind, topic, item, generator, version, problem_no, part, answer, status, "
                "score, max_score, seconds) VALUES (?, 'problem', ?, ?, ?, 1, 1, 'probs', '', 'blank', 0, 2, 3)",
                (WEEKS_AGO, CARD, ITEM, CARD))
    con.commit()
    con.close()
    res = run(["review"])
    assert res.exit_code == 1
    assert (f"Not reviewed: {CARD}: its question file is not known (practised before examprep kept it); "
            f"`examprep review --relink {CARD} FILE`") in res.output
    with History() as h:
        assert h.conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert [c[0] for c in h.cards()] == [ITEM] and len(h.attempts()) == 1
    assert run(["review", "--relink", CARD, str(question)]).exit_code == 0
    res = run(["review"], SKIP_ALL)
    assert res.exit_code == 0 and "Softmax of three logits" in res.output
    assert json.loads(run(["review", "--due", "--json"]).output)[0]["reviews"] == 2


def test_drop_on_a_read_only_history_says_so_and_changes_nothing(question, monkeypatch):
    import os

    from examprep import history as history_module
    from examprep.history import default_path

    due_card(question)
    before = stored()
    path = default_path()
    path.chmod(0o444)
    path.parent.chmod(0o555)
    monkeypatch.setattr(history_module, "_writable", lambda p: os.access(p, os.W_OK) and os.geteuid() != 0 and
                        os.access(p.parent, os.W_OK))        # the superuser writes whatever the modes say
    try:
        res = run(["review", "--drop", CARD])
    finally:
        path.parent.chmod(0o755)
        path.chmod(0o644)
    assert res.exit_code == 1
    assert res.stderr.startswith(f"error: {path}: the history is read-only, so its cards cannot be changed")
    assert stored() == before


def test_due_marks_a_card_review_cannot_serve_and_review_does_not_send_the_student_back(question):
    """Issue 36 (attack, item 10): after its file changed, `review --due` listed the card as "Due now" with
    "`examprep review` practises them", and `review` said "Not reviewed" and then the same advice."""
    due_card(question)
    with History() as h:
        review.review(h, "topic:attention", 3, now=WEEKS_AGO)           # a topic card, due as well
    question.write_text(question.read_text() + "\n")
    when = datetime.fromtimestamp(WEEKS_AGO).strftime("%Y-%m-%d %H:%M")
    line = (f"{CARD}: {question.resolve()} has changed since it was last used, {when} (its schedule was earned on the "
            f"old text); `examprep review --relink {CARD} {question.resolve()}` keeps its schedule for the new text, "
            f"`--drop {CARD}` ends the card")
    res = run(["review", "--due"])
    assert res.exit_code == 0, res.output
    assert "Due, but `examprep review` cannot serve 1 card until fixed:" in res.output
    assert f"  {line}\n" in res.output                                  # one line, as `review` says it
    assert "Due now: 1" in res.output and "`examprep review` practises them" in res.output
    table = res.output.split("Due now: 1", 1)[1].split("`examprep review` practises", 1)[0]
    assert "attention" in table and "softmax" not in table
    assert max(len(ln) for ln in res.output.splitlines() if ln != f"  {line}") <= 80
    listed = {c["item"]: c for c in json.loads(run(["review", "--due", "--json"]).output)}
    assert (listed[ITEM]["reviewable"], listed[ITEM]["reason"]) == (False, line)
    assert (listed["topic:attention"]["reviewable"], listed["topic:attention"]["reason"]) == (True, None)

    assert run(["review", "--drop", "attention"]).exit_code == 0         # now only the card it cannot serve is due
    res = run(["review"])
    assert res.exit_code == 1
    assert res.output.count(line) == 1 and f"Not reviewed: {line}" in res.output
    assert "practises them" not in res.output and "Due now" not in res.output and "Nothing else is due" in res.output


def test_practising_another_file_with_the_same_id_is_refused_naming_both_and_changes_nothing(question, tmp_path):
    due_card(question)
    copy = tmp_path / "other.toml"
    copy.write_text(question.read_text().replace("title = ", 'title = "Another" #', 1))
    res = run(["quiz", "--question", str(copy), "--seed", "1"], SKIP_ALL)
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert (f"{copy}:7: its id 'softmax-by-hand' is the card {CARD} that you practise from {question.resolve()}, "
            "another file") in line and f"examprep review --relink {CARD} {copy.resolve()}" in line, line
    cards, files, attempts = stored()
    assert files[ITEM].path == str(question.resolve()) and cards[ITEM][1] == 1 and not attempts
    # the card's own file, or another file once the first is gone, is practised as before
    assert run(["quiz", "--question", str(question), "--seed", "1"], SKIP_ALL).exit_code == 0
    question.unlink()
    assert run(["quiz", "--question", str(copy), "--seed", "1"], SKIP_ALL).exit_code == 0
    assert stored()[1][ITEM].path == str(copy.resolve())


def test_two_question_files_with_one_id_are_refused_together_naming_both(question, tmp_path):
    copy = tmp_path / "other.toml"
    copy.write_text(question.read_text())
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[sheet]\ntitle = "W"\n[[problem]]\nquestion = "{question}"\n[[problem]]\nquestion = "{copy}"\n')
    want = f"{copy}:7: id 'softmax-by-hand' is also the id of {question}, used with it"
    for args in (["quiz", "--question", str(question), "--question", str(copy)],
                 ["anki", "--topics", f"{question},{copy}", "-o", str(tmp_path / "d.apkg")],
                 ["sheet", "--topics", f"{question},{copy}", "-o", str(tmp_path / "s")],
                 ["generate", str(question), str(copy)],
                 ["sheet", "--recipe", str(recipe), "-o", str(tmp_path / "s")]):
        res = run(args)
        assert res.exit_code == 2 and want in " ".join(res.output.split()), (args, res.output)
        assert len(res.output.strip().splitlines()) == 1 or "problem 2 question" in res.output, res.output
    assert not (tmp_path / "d.apkg").exists() and not (tmp_path / "s").exists() and stored()[1] == {}
    assert run(["generate", str(question), str(question)]).exit_code == 0          # one file twice is one question


def test_a_choice_parts_expected_answer_shows_its_options_text():
    own = SOFTMAX.parent / "softmax-own-parts.toml"
    # seed 0: the right option is d) (the quiz's drawing of the variant is the key's: authoring.build)
    res = run(["quiz", "--question", str(own), "--seed", "0"], ["skip", "skip", "a", ""])
    assert res.exit_code == 0, res.output
    after = res.output.split("Which logits get a negative gradient?", 1)[1]
    assert "Expected:" in after and "d) the target class's only" in after.split("Expected:", 1)[1], after
