"""An answer file made for another sheet (or another student's variant) is refused, not graded
part by part with warnings: the template names its sheet's title on its first line and each
question's title, generator and points beside it (keys.answer_template). In a batch it is one
unreadable line and the batch goes on; given alone it is one error line, exit 2."""
import json

from typer.testing import CliRunner

from examprep.answers.files import read_file, template_mark
from examprep.cli import app
from examprep.generators import build
from examprep.keys import Key, answer_template, write_key

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", "NO_COLOR": "1"})


def sheet(tmp_path, name, title, generators, seed=1):
    problems = [build(g, seed) for g in generators]
    write_key(tmp_path / f"{name}.json", Key(title, problems))
    (tmp_path / f"{name}.toml").write_text(answer_template(problems, title=title, student_id=name) + "\n")
    return problems


def test_the_template_says_which_sheet_it_is_for(tmp_path):
    problems = sheet(tmp_path, "a", "Midterm (resit)", ["softmax-cross-entropy", "rnn-step"])
    (sub,), errors = read_file(tmp_path / "a.toml")
    assert errors == [] and sub.template.title == "Midterm (resit)"
    assert sub.template.questions == {n: (p.title, p.generator, f"{p.points:g}") for n, p in enumerate(problems, 1)}
    assert template_mark('q1 = {a = "1"}\n') is None                  # not made from a template: not judged


def test_a_file_for_another_sheet_given_alone_is_one_error_line_exit_2(tmp_path):
    sheet(tmp_path, "a", "Midterm", ["softmax-cross-entropy", "rnn-step"])
    sheet(tmp_path, "b", "CNN quiz", ["max-pool"])
    res = run("grade", tmp_path / "a.json", tmp_path / "b.toml", "--json", tmp_path / "g.json")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: {tmp_path / 'b.toml'}: answers for sheet 'CNN quiz', not this key's 'Midterm': "
                                 "its q1 is ")
    assert "(max-pool), this key has " in res.stderr and "(softmax-cross-entropy)\n" in res.stderr
    assert res.stderr.count("\n") == 1
    assert res.stdout == "" and not (tmp_path / "g.json").exists()


def test_in_a_batch_it_is_unreadable_and_the_others_are_graded(tmp_path):
    sheet(tmp_path, "a", "Midterm", ["softmax-cross-entropy", "rnn-step"])
    sheet(tmp_path, "b", "CNN quiz", ["max-pool"])
    res = run("grade", tmp_path / "a.json", tmp_path / "a.toml", tmp_path / "b.toml", "-q", "--json", tmp_path / "g.json")
    assert res.exit_code == 1, res.output
    assert f"unreadable: {tmp_path / 'b.toml'}: answers for sheet 'CNN quiz', not this key's 'Midterm'" in res.stderr
    data = json.loads((tmp_path / "g.json").read_text())
    assert [s["student_id"] for s in data["submissions"]] == ["a"]
    assert len(data["unreadable"]) == 1 and "answers for sheet 'CNN quiz'" in data["unreadable"][0]


def test_same_title_but_other_questions_is_another_sheet(tmp_path):
    sheet(tmp_path, "a", "Quiz 3", ["softmax-cross-entropy", "rnn-step"])
    sheet(tmp_path, "b", "Quiz 3", ["softmax-cross-entropy", "max-pool"])
    sheet(tmp_path, "c", "Quiz 3", ["softmax-cross-entropy"])
    res = run("grade", tmp_path / "a.json", tmp_path / "b.toml")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"error: {tmp_path / 'b.toml'}: answers for another sheet of 'Quiz 3': its q2 is ")
    assert "(max-pool), this key has" in res.stderr and "(rnn-step)" in res.stderr
    # a file with a question left out is this sheet, answered in part: graded (q2 blank)
    res = run("grade", tmp_path / "a.json", tmp_path / "c.toml", "-q")
    assert res.exit_code == 0 and "another sheet" not in res.output, res.output


def test_another_students_variant_is_refused(tmp_path):
    one, two = build("softmax-cross-entropy", 1), build("rnn-step", 1)
    write_key(tmp_path / "key.json", Key("Exam", [], variants={"s1": [one], "s2": [two]},
                                         variant_codes={"s1": "AAAA", "s2": "BBBB"}))
    (tmp_path / "s1.toml").write_text(answer_template([one], title="Exam", student_id="s1") + "\n")
    # s1 answered on s2's template (its id changed): s1's variant is another question
    (tmp_path / "s1-on-s2.toml").write_text(answer_template([two], title="Exam", student_id="s1") + "\n")
    res = run("grade", tmp_path / "key.json", tmp_path / "s1.toml", "-q")
    assert res.exit_code == 0, res.output
    res = run("grade", tmp_path / "key.json", tmp_path / "s1-on-s2.toml")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"error: {tmp_path / 's1-on-s2.toml'}: answers for another variant of 'Exam': its q1 is "
                                 f"{two.title!r} (rnn-step), ")
    assert f"s1's variant has {one.title!r}" in res.stderr


def test_a_file_made_for_this_sheet_is_graded_even_with_its_header_edited(tmp_path):
    sheet(tmp_path, "a", "Midterm", ["softmax-cross-entropy", "rnn-step"])
    text = (tmp_path / "a.toml").read_text()
    (tmp_path / "nohead.toml").write_text(text.split("\n", 1)[1])         # first line deleted: not judged
    for f in ("a.toml", "nohead.toml"):
        res = run("grade", tmp_path / "a.json", tmp_path / f, "-q")
        assert res.exit_code == 0, res.output


def test_students_edits_of_the_comments_and_a_reweighed_key_are_not_evidence(tmp_path):
    """Comments are not answers: a student's note in a question's comment, a name added to the
    title line, a comment deleted or moved, and points changed in the key after the exam (recipe
    points) all leave the file graded — only a question whose intact comment names another
    generator refuses it."""
    problems = sheet(tmp_path, "a", "CNN practice sheet", ["softmax-cross-entropy", "rnn-step", "max-pool"])
    text = (tmp_path / "a.toml").read_text()
    lines = text.splitlines()
    q1 = next(i for i, line in enumerate(lines) if line.startswith("[q1]"))
    edits = {
        "note": text.replace(lines[q1], "[q1]  # I think this is right"),
        "tail": text.replace(lines[q1], lines[q1] + " -- check!"),
        "bare": text.replace(lines[q1], "[q1]"),
        "moved": text.replace(lines[q1], "[q1]\n" + lines[q1][len("[q1]"):].strip()),
        "name": text.replace(lines[0], lines[0] + " (Ada)", 1),
    }
    for name, body in edits.items():
        (tmp_path / f"{name}.toml").write_text(body)
        res = run("grade", tmp_path / "a.json", tmp_path / f"{name}.toml", "-q")
        assert res.exit_code == 0, (name, res.output)
        assert "another sheet" not in res.output, (name, res.output)
    res = run("grade", tmp_path / "a.json", tmp_path / "name.toml")
    assert "names the sheet 'CNN practice sheet (Ada)', not this key's 'CNN practice sheet'" in " ".join(res.stdout.split())
    # the instructor reweighs question 1 after the exam: the students' templates still say 4 points
    import dataclasses
    first = problems[0]
    parts = (dataclasses.replace(first.parts[0], points=first.parts[0].points + 5),) + tuple(first.parts[1:])
    reweighed = [dataclasses.replace(first, parts=type(first.parts)(parts))] + problems[1:]
    assert reweighed[0].points != first.points
    write_key(tmp_path / "reweighed.json", Key("CNN practice sheet", reweighed))
    res = run("grade", tmp_path / "reweighed.json", tmp_path / "a.toml", "-q")
    assert res.exit_code == 0 and "another sheet" not in res.output, res.output


def class_key(tmp_path, meta=None):
    """A per-student key (sheet --roster): s1 and s2 answer the same questions with their own numbers."""
    problems = {sid: [build("softmax-cross-entropy", seed), build("rnn-step", seed)] for sid, seed in (("s1", 1), ("s2", 2))}
    write_key(tmp_path / "key.json", Key("Exam", [], variants=problems, variant_codes={"s1": "AAAA", "s2": "BBBB"},
                                         meta=meta or {}))
    return problems


def test_another_sheet_against_a_per_student_key_is_said_before_the_variant_lookup(tmp_path):
    """Issue 36: a CNN sheet's answers.toml graded against a class key was "no variant for student
    id 'answers' in this key": the variant lookup came first."""
    problems = class_key(tmp_path)
    cnn = [build("max-pool", 1)]
    (tmp_path / "answers.toml").write_text(answer_template(cnn, title="CNN quiz") + "\n")
    res = run("grade", tmp_path / "key.json", tmp_path / "answers.toml")
    assert res.exit_code == 2, res.output
    want = problems["s1"][0]
    assert res.stderr == (f"error: {tmp_path / 'answers.toml'}: answers for sheet 'CNN quiz', not this key's 'Exam': "
                          f"its q1 is {cnn[0].title!r} (max-pool), this key's variants have {want.title!r} "
                          "(softmax-cross-entropy)\n")


def test_the_printed_sheet_id_tells_two_sheets_of_one_recipe_apart(tmp_path):
    """Same title, same questions, other numbers: only the id the copies print (written into each
    template since issue 36) tells them apart."""
    problems = class_key(tmp_path, {"sheet_id": "exam-123456789012345678", "printed_id": "exam-AB2C-DE3F"})
    common = [build("softmax-cross-entropy", 9), build("rnn-step", 9)]
    (tmp_path / "answers.toml").write_text(answer_template(common, title="Exam", sheet="exam-ZZ2Z-ZZ3Z") + "\n")
    res = run("grade", tmp_path / "key.json", tmp_path / "answers.toml")
    assert res.exit_code == 2, res.output
    assert res.stderr == (f"error: {tmp_path / 'answers.toml'}: answers for sheet exam-ZZ2Z-ZZ3Z, not this key's sheet "
                          "exam-AB2C-DE3F\n")
    # the class's own template, with its sheet id: graded
    (tmp_path / "s1.toml").write_text(answer_template(problems["s1"], title="Exam", student_id="s1",
                                                      sheet="exam-AB2C-DE3F") + "\n")
    (sub,), _ = read_file(tmp_path / "s1.toml")
    assert sub.template.sheet == "exam-AB2C-DE3F"
    res = run("grade", tmp_path / "key.json", tmp_path / "s1.toml", "-q")
    assert res.exit_code == 0, res.output


def test_a_template_without_student_id_against_a_per_student_key_says_so(tmp_path):
    """An older template of the same questions (no sheet id) with no student_id: a sheet's common
    answers.toml, or an id erased — said, instead of "no variant for student id 'answers'"."""
    problems = class_key(tmp_path)
    (tmp_path / "answers.toml").write_text(answer_template(problems["s2"], title="Exam") + "\n")
    (tmp_path / "s1.toml").write_text(answer_template(problems["s1"], title="Exam", student_id="s1") + "\n")
    res = run("grade", tmp_path / "key.json", tmp_path / "answers.toml", tmp_path / "s1.toml", "-q")
    assert res.exit_code == 1, res.output
    assert res.stderr.splitlines()[0] == (
        f"unreadable: {tmp_path / 'answers.toml'}: no student_id in this answer template, and this key has a variant "
        "per student (sheet --roster): answers to a sheet made without --roster are graded with that sheet's key; "
        "else write the student's id as student_id")
    assert "graded 1 submission" in res.stderr


def test_two_sheets_of_one_recipe_refuse_each_others_templates(tmp_path):
    """`sheet` writes its printed id into answers.toml: the same recipe with another seed (same
    title, same questions) was graded against the wrong numbers."""
    for seed in ("3", "4"):
        res = run("sheet", "--recipe", "cnn", "--seed", seed, "--format", "md", "--out", tmp_path / seed)
        assert res.exit_code == 0, res.output
    assert "\n# sheet cnn-3\n\nstudent_id = " in (tmp_path / "3" / "answers.toml").read_text()
    res = run("grade", tmp_path / "3" / "key.json", tmp_path / "4" / "answers.toml")
    assert res.exit_code == 2, res.output
    assert res.stderr == f"error: {tmp_path / '4' / 'answers.toml'}: answers for sheet cnn-4, not this key's sheet cnn-3\n"
    res = run("grade", tmp_path / "3" / "key.json", tmp_path / "3" / "answers.toml", "-q")
    assert res.exit_code == 0, res.output
