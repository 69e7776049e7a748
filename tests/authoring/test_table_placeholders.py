"""A placeholder naming a parameter that is a table or a list of tables (a network's layers) is one
line naming the file, line and placeholder when the question is read, not a traceback on drawing."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from examprep.authoring import QuestionError, build_question, parse_question
from examprep.cli import app

QUESTION = '''[question]
id = "stack"
title = "Receptive field"
solve = "receptive-field"
text = "A stack of layers {layers}."

[question.params]
layers = LAYERS

[[question.part]]
answer = "receptive_field"
prompt = "The receptive field."
'''
STACK = "[{ kernel_size = 3, stride = 1 }, { kernel_size = 3, stride = 2 }]"
MESSAGE = ("q.toml:5: text: placeholder {layers} is a table or a list of tables, which a statement cannot show as "
           "math; describe it in the text (the topic still reads it)")


@pytest.mark.parametrize("layers", [STACK, f"{{ choice = [{STACK}, {STACK}] }}"])
def test_a_list_of_tables_in_the_text_is_refused_in_one_line(layers):
    with pytest.raises(QuestionError) as err:
        parse_question(QUESTION.replace("LAYERS", layers), "q.toml")
    assert str(err.value) == MESSAGE
    words = QUESTION.replace("LAYERS", layers).replace("{layers}", "(two 3-wide convolutions, strides 1 and 2)")
    assert build_question(parse_question(words, "q.toml"), 1).parts[0].expected == 5     # described in words: fine


def test_generate_and_check_say_it_without_a_traceback(tmp_path):
    q = tmp_path / "q.toml"
    q.write_text(QUESTION.replace("LAYERS", STACK))
    for args in (["generate", str(q), "--seed", "1"], ["check", str(q)]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and res.output.strip() == f"error: {tmp_path}/{MESSAGE}", res.output

