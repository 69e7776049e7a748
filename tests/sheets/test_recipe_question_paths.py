"""A recipe's `question = "…"` reads only question files: a .toml file inside the recipe's project
(the first of its folder's parents holding .git: a course's recipes/ and questions/ folders) or
under --questions-dir, links resolved; /etc/shadow, a file beside the project, a link out of it
and a named pipe are each refused in one line naming the recipe's line."""
import os
import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from examprep import sheets
from examprep.cli import app
from examprep.sources.recipes import SheetError

QUESTION = Path(str(resources.files("examprep") / "bank" / "questions" / "softmax-by-hand.toml"))


def course(tmp_path: Path, question: str, git: bool = True) -> Path:
    """tmp/course/{.git, recipes/r.toml, questions/q.toml}; the recipe's one problem is ``question``."""
    root = tmp_path / "course"
    (root / "recipes").mkdir(parents=True)
    (root / "questions").mkdir()
    if git:
        (root / ".git").mkdir()
    shutil.copy(QUESTION, root / "questions" / "q.toml")
    recipe = root / "recipes" / "r.toml"
    recipe.write_text(f'[sheet]\ntitle = "T"\n\n[[problem]]\nquestion = "{question}"\n')
    return recipe


def test_a_courses_recipes_and_questions_folders_work(tmp_path):
    recipe = sheets.load_recipe(str(course(tmp_path, "../questions/q.toml")))
    assert recipe.items[0].question.id == "softmax-by-hand"


@pytest.mark.parametrize("question, message", [
    ("/etc/shadow", "'/etc/shadow' is not a question file (a question file ends in .toml)"),
    ("../questions/q.txt", "'../questions/q.txt' is not a question file"),
    ("/etc/hosts.toml", "'/etc/hosts.toml' is outside the recipe's project ({root})"),
    ("../../outside.toml", "'../../outside.toml' is outside the recipe's project ({root})"),
])
def test_a_path_that_is_no_question_file_of_the_project_is_refused(tmp_path, question, message):
    recipe = course(tmp_path, question)
    (tmp_path / "outside.toml").write_text(QUESTION.read_text())
    with pytest.raises(SheetError) as err:
        sheets.load_recipe(str(recipe))
    assert str(err.value).startswith(f"{recipe}:5: problem 1 question: {message.format(root=tmp_path / 'course')}")
    assert "--questions-dir" in str(err.value) or "ends in .toml" in str(err.value)


def test_a_link_out_of_the_project_is_refused(tmp_path):
    recipe = course(tmp_path, "../questions/link.toml")
    (tmp_path / "secret.toml").write_text(QUESTION.read_text())
    (tmp_path / "course" / "questions" / "link.toml").symlink_to(tmp_path / "secret.toml")
    with pytest.raises(SheetError, match="'../questions/link.toml' is outside the recipe's project"):
        sheets.load_recipe(str(recipe))


def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    recipe = course(tmp_path, "../questions/pipe.toml")
    os.mkfifo(tmp_path / "course" / "questions" / "pipe.toml")
    with pytest.raises(SheetError, match="a named pipe, not a regular file"):
        sheets.load_recipe(str(recipe))


def test_questions_dir_admits_a_folder_outside_the_project(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(QUESTION, shared / "s.toml")
    recipe = course(tmp_path, str(shared / "s.toml"))
    with pytest.raises(SheetError, match="outside the recipe's project"):
        sheets.load_recipe(str(recipe))
    assert sheets.load_recipe(str(recipe), questions_dir=shared).items[0].question.id == "softmax-by-hand"
    res = CliRunner().invoke(app, ["sheet", "-r", str(recipe), "-f", "md", "--out", str(tmp_path / "o"), "-s", "1",
                                   "--questions-dir", str(shared)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["sheet", "-r", str(recipe), "-f", "md", "--out", str(tmp_path / "o2"), "-s", "1"])
    assert res.exit_code == 2 and "give --questions-dir DIR" in res.stderr and not (tmp_path / "o2").exists()


def test_without_git_the_project_is_the_recipes_folder(tmp_path):
    recipe = course(tmp_path, "../questions/q.toml", git=False)
    with pytest.raises(SheetError, match=r"outside the recipe's project \(.*recipes\)"):
        sheets.load_recipe(str(recipe))
    assert sheets.load_recipe(str(recipe), questions_dir=tmp_path / "course" / "questions").items


def test_examprep_s_own_example_questions_may_be_named_by_their_path(tmp_path):
    recipe = course(tmp_path, str(QUESTION))
    assert sheets.load_recipe(str(recipe)).items[0].question.id == "softmax-by-hand"
