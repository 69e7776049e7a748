"""Question files that ask tensor shapes (issue 36, item 1): a topic's list of shapes (network-shapes'
output_shapes, one per layer, of different lengths) is its own answer kind, written
3×28×28; 6×24×24; 864; a single shape reads 7x16 in a key read back later; and generate and sheet
refuse a part that `examprep check` calls not usable, in check's words."""
import json

from typer.testing import CliRunner

from examprep.authoring.build import build_question
from examprep.authoring.question import load_question
from examprep.cli import app
from examprep.keys import read_key
from examprep.answers import check_part

runner = CliRunner()

NETWORK = '''[question]
id = "net-table"
title = "Shapes through a small CNN"
solve = "network-shapes"
text = "Image {input_shape}, batch of {filters}: conv2d 6 filters 5×5, padding 1, ReLU, max-pool, flatten, linear."

[question.params]
filters = { integers = [4, 8] }
input_shape = [1, 28, 28]
layers = [{type = "conv2d", out_channels = 6, kernel_size = 5, padding = 1}, {type = "relu"},
          {type = "max-pool", kernel_size = 2}, {type = "flatten"}, {type = "linear", out_features = 10}]

[[question.part]]
answer = "output_shapes"
prompt = "The output shape of every layer, in order."
points = 3
'''

HEADS = '''[question]
id = "heads"
title = "Multi-head shapes"
solve = "multi-head-shapes"
text = "Self-attention with {num_heads} heads, d_model = {d_model}, n = {n} tokens."

[question.params]
n = { integers = [3, 9] }
d_model = { choice = [64, 128] }
num_heads = { choice = [2, 4] }

[[question.part]]
answer = "query_shape"
prompt = "The shape of one head's queries."
'''

# a convolution over two channels: its output has three axes, which no part kind holds
CHANNELS = '''[question]
id = "channels"
title = "Two channels"
solve = "conv2d"
text = "Convolve."

[question.params]
input = [[[1, 2, 0], [0, 1, 3], [2, 1, 0]], [[0, 1, 1], [2, 0, 1], [1, 1, 2]]]
kernel = [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]], [[[1, 1], [0, 0]], [[-1, 0], [0, 2]]]]

[[question.part]]
answer = "output"
prompt = "The output."
'''


def run(*args):
    res = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    res.text = " ".join(res.output.split())          # the report wraps its lines: read it unwrapped
    return res


def test_a_list_of_shapes_is_its_own_kind_and_is_graded(tmp_path):
    path = tmp_path / "net.toml"
    path.write_text(NETWORK, encoding="utf-8")
    checked = run("check", path)
    assert checked.exit_code == 0 and "usable" in checked.output
    res = run("generate", path, "--key", tmp_path / "key.json", "--template", tmp_path / "answers.toml")
    assert res.exit_code == 0, res.output
    assert "shapes, one per layer, separated by ';', e.g. 3×28×28; 6×24×24; 864" in (tmp_path / "answers.toml").read_text()
    part = read_key(tmp_path / "key.json").problems[0].parts[0]
    assert (part.kind, part.expected) == ("shapes", [[6, 26, 26], [6, 26, 26], [6, 13, 13], [1014], [10]])
    assert check_part(part, "6×26×26; 6 x 26 x 26; (6, 13, 13); 1014; 10", {}).status == "correct"
    once = next(m for m in part.misconceptions if m.id == "padding-once")
    written = "; ".join("×".join(map(str, shape)) for shape in once.value)
    r = check_part(part, written, {})
    assert (r.status, r.misconception.id) == ("misconception", "padding-once")


def test_an_authored_shape_reads_as_one_in_a_key_read_back(tmp_path):
    path = tmp_path / "heads.toml"
    path.write_text(HEADS, encoding="utf-8")
    part = build_question(load_question(str(path)), 2).parts[0]
    assert part.tensor_shape and part.form() == "shape rows×columns, e.g. 7×12"
    assert run("generate", path, "--seed", "2", "--key", tmp_path / "key.json").exit_code == 0
    assert "tensor_shape" not in (tmp_path / "key.json").read_text()         # linked by its recipe, not a flag
    read = read_key(tmp_path / "key.json").problems[0].parts[0]
    assert read.tensor_shape
    assert check_part(read, "x".join(str(v) for v in read.expected), {}).status == "correct"


def test_generate_and_sheet_refuse_what_check_calls_not_usable(tmp_path):
    path = tmp_path / "channels.toml"
    path.write_text(CHANNELS, encoding="utf-8")
    checked = run("check", path)
    assert checked.exit_code == 1 and "not usable: a part cannot be graded" in checked.text
    because = "cannot be graded: output is not a number, vector or matrix"
    assert f"error: {path}:11: part output: in 50 of 50 draws" in checked.text and because in checked.text
    generated = run("generate", path, "--seed", "4", "--key", tmp_path / "key.json")
    assert generated.exit_code == 2, generated.output
    assert f"{path}:11: part output: {because} (seed 4); `examprep check` says not usable" in generated.text
    assert not (tmp_path / "key.json").exists()
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'[sheet]\ntitle = "Q"\n\n[[problem]]\nquestion = {json.dumps(str(path))}\n', encoding="utf-8")
    sheet = run("sheet", "--recipe", recipe, "--format", "md", "--out", tmp_path / "out")
    assert sheet.exit_code == 2 and because in sheet.text, sheet.output
    assert not (tmp_path / "out" / "key.json").exists()


def test_an_lms_export_of_a_list_of_shapes_is_refused_naming_the_part(tmp_path):
    path = tmp_path / "net.toml"
    path.write_text(NETWORK, encoding="utf-8")
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(f'[sheet]\ntitle = "Q"\n\n[[problem]]\nquestion = {json.dumps(str(path))}\n', encoding="utf-8")
    res = run("sheet", "--recipe", recipe, "--format", "md,moodle", "--out", tmp_path / "out")
    assert res.exit_code == 2 and "--format moodle: q1.output_shapes asks a list of shapes" in res.text, res.output
    assert not (tmp_path / "out").exists()
    assert run("sheet", "--recipe", recipe, "--format", "md", "--out", tmp_path / "out").exit_code == 0


def test_a_one_layer_network_asks_a_list_of_one_shape_not_a_one_by_three_matrix(tmp_path):
    path = tmp_path / "one.toml"
    one = NETWORK.split("layers = ")[0] + 'layers = [{type = "conv2d", out_channels = 6, kernel_size = 5, padding = 1}]\n'
    path.write_text(one + NETWORK.split("linear\", out_features = 10}]\n")[1], encoding="utf-8")
    part = build_question(load_question(str(path)), 0).parts[0]
    assert (part.kind, part.expected) == ("shapes", [[6, 26, 26]])
    assert "[[" not in part.form() and "matrix" not in part.form()
    assert check_part(part, "6×26×26", {}).status == "correct"
