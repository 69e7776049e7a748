"""`examprep grade` on a terminal shows a student's id and name and a question's title as written:
never read as rich markup ("[bold]") or emoji codes (":question:" became ❓) (issue 36, item 6)."""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from typer.testing import CliRunner

from examprep.cli import app

runner = CliRunner()
SOFTMAX = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))
TITLE = "[bold]Mine[/bold] :question: q"
IDS = ("[bold]s1:question:", "[bold]s2:smile:")
NAME = "[red]Ann[/red] :smile:"
MISTAKE = "[bold]m:question:"


def test_ids_names_and_titles_are_shown_as_written(tmp_path):
    question = tmp_path / "t.toml"
    question.write_text(SOFTMAX.read_text().replace('title = "Softmax of three logits"', f'title = "{TITLE}"'))
    res = runner.invoke(app, ["generate", str(question), "--seed", "1", "--key", str(tmp_path / "k.json"),
                              "--template", str(tmp_path / "a.toml")])
    assert res.exit_code == 0, res.output
    template = (tmp_path / "a.toml").read_text()
    files = []
    for sid in IDS:
        path = tmp_path / f"{len(files)}.toml"
        path.write_text(template.replace('student_id = ""', f'student_id = "{sid}"')
                        .replace('name = ""', f'name = "{NAME}"'))
        files.append(str(path))
    one = runner.invoke(app, ["grade", str(tmp_path / "k.json"), files[0]], env={"COLUMNS": "120"})
    assert one.exit_code == 0, one.output
    assert f"{IDS[0]}  {NAME}  0/7" in one.output                  # the feedback view's head
    assert f"─ q1 {TITLE} — 0/7 ─" in one.output                    # its question's panel
    both = runner.invoke(app, ["grade", str(tmp_path / "k.json"), *files], env={"COLUMNS": "120"})
    assert both.exit_code == 0, both.output
    assert all(f"  {sid}  " in both.output for sid in IDS)          # the class table
    graded = runner.invoke(app, ["grade", str(tmp_path / "k.json"), *files, "--json", str(tmp_path / "g.json")])
    assert graded.exit_code == 0, graded.output
    grades = json.loads((tmp_path / "g.json").read_text())
    part = grades["submissions"][1]["problems"][0]["parts"][0]
    part.update(status="misconception", misconception=MISTAKE)         # as grades.json can hold it
    (tmp_path / "g.json").write_text(json.dumps(grades))
    analysis = runner.invoke(app, ["analyze", str(tmp_path / "g.json")], env={"COLUMNS": "120"})
    assert analysis.exit_code == 0, analysis.output
    assert f" {MISTAKE} " in analysis.output                           # the misconceptions table
    broken = tmp_path / "[bold]x:question:.toml"
    broken.write_text('student_id = "s3"\n[q1\n')
    bad = runner.invoke(app, ["grade", str(tmp_path / "k.json"), files[0], str(broken)], env={"COLUMNS": "120"})
    assert bad.exit_code == 1
    assert f"unreadable: {broken}" in bad.stderr                        # the line on stderr names it as it is
    assert not any(e in r.output for r in (one, both, analysis, bad) for e in "❓😄")


def test_the_autograder_summary_names_its_zip_as_written(tmp_path, monkeypatch):
    from examprep.generators import build
    from examprep.grading import autograder
    from examprep.keys import Key, write_key

    wheel = tmp_path / "examprep-0-py3-none-any.whl"
    wheel.write_bytes(b"wheel")
    monkeypatch.setattr(autograder, "build_wheel", lambda tmp: wheel)      # no real wheel: not what is tested
    write_key(tmp_path / "k.json", Key("Exam", [build("softmax-cross-entropy", 1)]))
    out = tmp_path / "[bold]a:question:.zip"
    res = runner.invoke(app, ["gradescope-autograder", str(tmp_path / "k.json"), "--out", str(out)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    assert f"wrote {out}: setup.sh" in res.stderr and "❓" not in res.stderr


def test_typographic_spaces_in_an_answer_are_shown_as_spaces_and_controls_escaped(tmp_path):
    """Issue 36 (attack, item 11): "your answer" read 16\\xa0×\\xa028 on the terminal; a no-break or
    thin space shows as the space it is, while an ESC or a bidi override is still shown escaped."""
    res = runner.invoke(app, ["generate", str(SOFTMAX), "--seed", "1", "--key", str(tmp_path / "k.json"),
                              "--template", str(tmp_path / "a.toml")])
    assert res.exit_code == 0, res.output
    answers = tmp_path / "s1.toml"
    answers.write_text((tmp_path / "a.toml").read_text()
                       .replace('student_id = ""', 'student_id = "s1"')
                       .replace('probs = ""', 'probs = "[0.01321,\u00a00.2654,\u20090.7214]"')
                       .replace('grad_logits = ""', 'grad_logits = "[0.01321, \u202e-0.7346, 0.7214\\u001b[2J]"'),
                       encoding="utf-8")
    res = runner.invoke(app, ["grade", str(tmp_path / "k.json"), str(answers)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "[0.01321,\u00a00.2654,\u20090.7214]" in res.output and "\\xa0" not in res.output
    assert "\\u202e-0.7346" in res.output and "\\x1b" in res.output
    assert not any(c in res.output for c in "\u202e\x1b")
