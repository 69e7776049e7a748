"""One answer file given alone that cannot be graded is the wrong file: one error line naming it
and why, exit 2, no empty class table. In a batch (a folder, several files) the same file is one
`unreadable` line and every other submission is graded (exit 1)."""
import json

import pytest
from typer.testing import CliRunner

from examprep import generators
from examprep.cli import app
from examprep.keys import Key, write_key

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80"})


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    d = tmp_path_factory.mktemp("alone")
    res = run("generate", "gru-step", "--seed", "7", "--key", d / "key.json", "--template", d / "answers.toml")
    assert res.exit_code == 0, res.output
    (d / "ada.toml").write_text((d / "answers.toml").read_text().replace('student_id = ""', 'student_id = "ada"')
                                .replace('r = ""', 'r = "0.5"'))
    res = run("grade", d / "key.json", d / "ada.toml", "--json", d / "grades.json")
    assert res.exit_code == 0, res.output
    res = run("generate", "softmax-cross-entropy", "--seed", "1", "--key", d / "other-key.json")
    assert res.exit_code == 0, res.output
    return d


def files(d):
    (d / "bad").mkdir(exist_ok=True)
    (d / "bad" / "empty.toml").write_text("")
    (d / "bad" / "bin.toml").write_bytes(bytes(range(256)) * 4)
    return {
        "empty": (d / "bad" / "empty.toml", "empty file"),
        "binary": (d / "bad" / "bin.toml", "a binary file, not a text answer file"),
        "a key": (d / "other-key.json", "this is an answer key, not a submission"),
        "grades": (d / "grades.json", "this is a class's grades (grade --json), not a submission"),
        "the key itself": (d / "key.json", "this is the key itself, given as a submission; give the students' "
                                           "answer files (.toml, .json, .csv) or a directory of them"),
    }


@pytest.mark.parametrize("case", ["empty", "binary", "a key", "grades", "the key itself"])
def test_a_refused_file_given_alone_is_one_error_line_exit_2(sheet, case):
    path, why = files(sheet)[case]
    res = run("grade", sheet / "key.json", path)
    assert (res.exit_code, res.stderr, res.stdout) == (2, f"error: {path}: {why}\n", "")


def test_a_student_with_no_variant_given_alone_is_one_error_line_exit_2(sheet, tmp_path):
    key = tmp_path / "variants.json"
    write_key(key, Key(title="v", problems=[], variants={"s001": [generators.build("gru-step", 3, 1)]}))
    sub = tmp_path / "zed.toml"
    sub.write_text('student_id = "zed"\n[q1]\nr = "0.5"\n')
    res = run("grade", key, sub)
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr == (f"error: {sub}: no variant for student id 'zed' in this key; check the id, or add "
                          'variant = "CODE" from the sheet\n')


def test_in_a_batch_the_refused_files_are_listed_and_the_rest_graded(sheet, tmp_path):
    files(sheet)
    res = run("grade", sheet / "key.json", sheet / "bad", sheet / "ada.toml", "--no-details")
    assert res.exit_code == 1
    assert "unreadable:" in res.stderr and "empty file" in res.stderr and "a binary file" in res.stderr
    assert "graded 1 submission; 2 could not be read" in res.stderr
    assert "ada" in res.stdout


def test_a_class_csv_given_alone_with_one_bad_row_still_grades_the_others(sheet, tmp_path):
    csv = tmp_path / "class.csv"
    csv.write_text("student_id,q1.r\nada,0.5\nbo,0.5\n")
    key = tmp_path / "variants.json"
    write_key(key, Key(title="v", problems=[], variants={"ada": [generators.build("gru-step", 3, 1)]}))
    res = run("grade", key, csv, "--json", "-")
    assert res.exit_code == 1
    assert [s["student_id"] for s in json.loads(res.stdout)["submissions"]] == ["ada"]
    assert "no variant for student id 'bo'" in res.stderr


def test_a_csv_whose_header_names_no_part_of_the_key_is_unreadable_in_one_line(sheet, tmp_path):
    nocols = tmp_path / "nocols.csv"
    nocols.write_text("a,b,c\n1,2,3\n")
    res = run("grade", sheet / "key.json", nocols)
    assert (res.exit_code, res.stdout) == (2, "")
    assert res.stderr == (f"error: {nocols}: no column names a part of the key (its columns: 'a', 'b', 'c'; "
                          "expected headers such as student_id,q1.r)\n")
    folder = tmp_path / "class"
    folder.mkdir()
    nocols.rename(folder / "nocols.csv")
    (folder / "ada.toml").write_text((sheet / "ada.toml").read_text())
    res = run("grade", sheet / "key.json", folder, "--no-details")
    assert res.exit_code == 1 and "unknown part id" not in res.output and "nocols-row2" not in res.output
    assert f"unreadable: {folder / 'nocols.csv'}: no column names a part of the key" in res.stderr
    assert "graded 1 submission; 1 could not be read" in res.stderr


@pytest.mark.parametrize("header", ["student_id,q1.r,extra", "student_id,r", "id,q1.z"])
def test_a_csv_naming_one_part_of_the_key_is_graded(sheet, tmp_path, header):
    path = tmp_path / "c.csv"
    path.write_text(f"{header}\nada,0.5{',x' if header.count(',') == 2 else ''}\n")
    res = run("grade", sheet / "key.json", path, "--json", "-")
    assert res.exit_code == 0, res.output
    assert [s["student_id"] for s in json.loads(res.stdout)["submissions"]] == ["ada"]
