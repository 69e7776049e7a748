"""`examprep topics` and `examprep generate` from the command line."""
import json

import pytest
from typer.testing import CliRunner

from examprep.cli import app
from examprep.problem import Problem

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_topics_lists_generators():
    res = run("topics", "--no-color")
    assert res.exit_code == 0
    for name in ("attention", "gru-step", "receptive-field", "softmax-cross-entropy"):
        assert name in res.output
    data = json.loads(run("topics", "--json").output)
    assert {d["topic"] for d in data} >= {"attention", "gru-step"} and all(d["levels"] for d in data)


def test_topics_reads_at_80_columns_one_entry_per_topic():
    """Issue 36 (attack, item 13): at 80 columns four table columns wrapped into fragments of three words."""
    from examprep import generators

    res = runner.invoke(app, ["topics", "--no-color"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    gens = generators.all_generators()
    g = gens["activation"]
    at = lines.index("activation  levels 1,2,3 ·cf")
    assert lines[at + 1].strip() == g.title and lines[at + 2].strip() == g.syllabus      # whole, each on its line
    assert [line for line in lines if not line.startswith(" ")][:-1] == [
        f"{g.name}  levels {','.join(map(str, g.levels))}" + (" ·cf" if g.calculator_free else "") for g in gens.values()]
    wide = runner.invoke(app, ["topics", "--no-color"], env={"COLUMNS": "160"})
    assert "━━━" in wide.output and "topic" in wide.output.splitlines()[1]       # a table where it fits


@pytest.mark.parametrize("topic", ["attention", "softmax-cross-entropy", "receptive-field", "gru-step"])
def test_generate_with_solution_in_the_terminal(topic):
    res = run("generate", topic, "--seed", "7", "--solution", "--no-color")
    assert res.exit_code == 0, res.output
    assert "worked solution" in res.output and "answers" in res.output and "seed 7" in res.output
    assert "(a)" in res.output and "Step 1." in res.output


def test_generate_markdown_has_latex_math_and_answers():
    res = run("generate", "attention", "--seed", "7", "--solution", "--markdown")
    assert res.exit_code == 0
    assert "## Scaled dot-product attention" in res.output or "## Self-attention" in res.output
    assert "$$" in res.output and r"\begin{bmatrix}" in res.output and "### Answers" in res.output


def test_generate_without_solution_shows_no_answers():
    res = run("generate", "attention", "--seed", "7", "--markdown")
    assert "### Answers" not in res.output and "Worked solution" not in res.output


def test_generate_json_round_trips_and_count_uses_consecutive_seeds():
    res = run("generate", "gru-step", "--seed", "3", "--count", "3", "-d", "2", "--json")
    assert res.exit_code == 0
    probs = [Problem.from_dict(d) for d in json.loads(res.output)]
    assert [p.seed for p in probs] == [3, 4, 5] and all(p.difficulty == 2 for p in probs)


def test_generate_is_reproducible_from_the_printed_seed():
    a = run("generate", "softmax-cross-entropy", "--seed", "11", "--json").output
    b = run("generate", "softmax-cross-entropy", "--seed", "11", "--json").output
    assert a == b


def test_calculator_free_gives_exact_answers():
    out = json.loads(run("generate", "softmax-cross-entropy", "--seed", "1", "--calculator-free", "--json").output)[0]
    assert out["calculator_free"] and all(p["exact"] for p in out["parts"])


@pytest.mark.parametrize("args,fragment", [
    (["generate", "attenton"], "did you mean attention"),
    (["generate", "attention", "-d", "4"], "--difficulty"),
    (["generate", "attention", "--count", "-2"], "--count"),
    (["generate", "attention", "--seed", "abc"], "--seed: expected an integer"),
    (["generate", "attention", "--seed", "-5"], "--seed"),
])
def test_bad_input_one_line_exit_two(args, fragment):
    res = run(*args)
    assert res.exit_code == 2
    assert fragment in res.output and "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1


def test_key_and_template_never_replace_existing_files_without_force(tmp_path):
    answers = tmp_path / "ada.toml"
    answers.write_text('student_id = "ada"\n[q1]\nr = "0.5"\n', encoding="utf-8")
    before = answers.read_bytes()
    res = run("generate", "attention", "--seed", "7", "--template", str(answers), "--key", str(tmp_path / "k.json"))
    assert res.exit_code == 2 and "already exists" in res.output and "--force" in res.output
    assert answers.read_bytes() == before and not (tmp_path / "k.json").exists()     # nothing written
    res = run("generate", "attention", "--seed", "7", "--template", str(answers), "--force")
    assert res.exit_code == 0 and answers.read_bytes() != before


def test_key_into_a_missing_directory_is_refused_not_created(tmp_path):
    res = run("generate", "attention", "--seed", "7", "--key", str(tmp_path / "typo" / "key.json"))
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr.startswith(f"error: --key {tmp_path / 'typo' / 'key.json'}: the directory {tmp_path / 'typo'} "
                                 "does not exist")
    assert not (tmp_path / "typo").exists()
    res = run("generate", "attention", "--seed", "7", "--template", str(tmp_path / "typo" / "a.toml"))
    assert res.exit_code == 2 and "--template" in res.stderr and not (tmp_path / "typo").exists()


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_key_naming_a_directory_says_so_with_or_without_force(tmp_path, force):
    res = run("generate", "attention", "--seed", "7", "--key", str(tmp_path), *force)
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert res.stderr == f"error: --key {tmp_path}: is a directory; give a file name such as {tmp_path / 'key.json'}\n"
    assert "Is a directory" not in res.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--key", "--template"])
def test_a_question_file_being_built_is_never_replaced_even_with_force(tmp_path, option):
    # `generate q.toml --key q.toml --force` replaced the instructor's question file with the key
    from pathlib import Path

    import examprep

    source = Path(examprep.__file__).parent / "bank" / "questions" / "softmax-by-hand.toml"
    question = tmp_path / "q.toml"
    question.write_bytes(source.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(question)
    for target in (question, link):
        res = run("generate", str(question), "--seed", "1", option, str(target), "--force")
        assert res.exit_code == 2 and res.stderr == f"error: {option} {target}: is an input being read; " \
                                                    "choose another path\n", res.output
    assert question.read_bytes() == source.read_bytes() and link.is_symlink()


def test_an_empty_key_name_is_refused_as_empty_not_as_a_directory():
    res = run("generate", "attention", "--seed", "7", "--key", "")
    assert res.exit_code == 2 and res.stderr == "error: --key: an empty file name; give a file name\n"


def test_json_and_markdown_together_are_refused_not_one_silently_dropped():
    res = run("generate", "attention", "--seed", "7", "--json", "--markdown")
    assert res.exit_code == 2 and res.stderr == "error: --json and --markdown: choose one (each prints the problems " \
                                                "in its own format)\n" and res.stdout == ""


def test_a_key_alone_prints_one_line_per_problem_and_show_prints_them(tmp_path):
    # issue 36: `generate TOPIC --key k.json` printed the whole problem before "wrote k.json"
    res = run("generate", "gru-step", "softmax-cross-entropy", "--seed", "7", "--key", str(tmp_path / "k.json"))
    assert res.exit_code == 0, res.output
    assert res.stdout == ("1. One GRU step — gru-step · level 1 · seed 7 · 6 points\n"
                          "2. Softmax + cross-entropy — softmax-cross-entropy · level 1 · seed 7 · 9 points\n")
    assert res.stderr == f"wrote {tmp_path / 'k.json'}\n"
    res = run("generate", "gru-step", "--seed", "7", "--key", str(tmp_path / "k.json"), "--force", "--show",
              "--no-color")
    assert res.exit_code == 0 and "reset gate" in res.stdout and "╭" in res.stdout
    res = run("generate", "gru-step", "--seed", "7", "--no-color")             # no key: the problem, as always
    assert "reset gate" in res.stdout and "wrote" not in res.output
