"""Tensor shapes written as the sheets print them (issue 36, item 1): a part whose solve topic
declares its answer a shape reads 10×26×26, 10 x 26 x 26, 10x26x26, (10, 26, 26), [10, 26, 26] and
10, 26, 26 alike; a list of shapes is its own kind; × stays multiplication everywhere else."""
import pytest

from examprep import generators, solve
from examprep.answers import AnswerParseError, check_part, parse_answer
from examprep.answers.shapes import read_shape, read_shapes
from examprep.problem import EXACT, Part

SIX_WAYS = ("{0}×{1}×{2}", "{0} x {1} x {2}", "{0}x{1}x{2}", "({0}, {1}, {2})", "[{0}, {1}, {2}]", "{0}, {1}, {2}")


def written(style: str, value: list) -> str:
    return style.format(*[int(v) for v in value])


@pytest.fixture(scope="module")
def network():
    """A two-block CNN table (padding, so padding-once names a shape), its shape parts marked."""
    return generators.mark_shapes(generators.build("network-shapes", 0, 2))


def test_the_solve_tables_declare_the_shape_answers_once():
    assert set(solve.get_topic("multi-head-shapes").shapes) == {"query_shape", "key_shape", "value_shape", "scores_shape",
                                                               "head_output_shape", "output_shape"}
    assert solve.get_topic("network-shapes").shape_lists == ("output_shapes",)
    from examprep.solve.contract import TOPICS

    for t in TOPICS.values():            # a declared shape is one of the topic's answers
        assert set(t.shapes) | set(t.shape_lists) <= set(t.answers), t.name


def test_an_author_sees_which_answers_are_shapes():
    from typer.testing import CliRunner

    from examprep.cli import app

    listed = CliRunner().invoke(app, ["solve", "--list", "network-shapes"], env={"COLUMNS": "100"}).output
    assert "output_shapes  a list of shapes (3×28×28; 864)" in listed
    listed = CliRunner().invoke(app, ["solve", "--list", "multi-head-shapes"], env={"COLUMNS": "100"}).output
    assert "query_shape  a shape (10×26×26)" in listed and "\n  d_k  ECF" in listed   # d_k: a plain number, not a shape


@pytest.mark.parametrize("name, level, ids", [
    ("network-shapes", 1, {"conv2d_shape", "max_pool_shape", "flatten_shape"}),
    ("network-shapes", 3, {"conv2d_1_shape", "conv2d_2_shape", "conv2d_3_shape", "max_pool_shape",
                           "global_avg_pool_shape", "flatten_shape"}),
    ("multi-head", 1, {"query_shape", "scores_shape", "output_shape"}),
    ("cross-attention", 1, {"scores_shape", "output_shape"}),
    ("multi-head", 2, set()), ("max-pool", 3, set())])        # no shape there; max-pool's [before, after] padding
def test_every_tensor_shape_part_of_a_built_in_generator_is_marked(name, level, ids):
    problem = generators.mark_shapes(generators.build(name, 0, level))
    assert {p.id for p in problem.parts if p.tensor_shape} == ids
    assert problem.to_dict() == generators.build(name, 0, level).to_dict()     # the mark is never stored


@pytest.mark.parametrize("style", SIX_WAYS)
def test_a_shape_part_reads_the_six_ways_a_shape_is_written(network, style):
    for part in (p for p in network.parts if p.tensor_shape and len(p.expected) == 3):
        r = check_part(part, written(style, part.expected), {})
        assert (r.status, r.score) == ("correct", part.points), (part.id, style, r.feedback)


@pytest.mark.parametrize("raw", ["864", "(864,)", "[864]", " 864 ", 864, [864]])
def test_a_one_dimensional_shape(raw):
    part = Part("flatten_shape", "", "vector", [864], tolerance=EXACT, shape=(1,), tensor_shape=True)
    assert parse_answer(part, raw) == [864.0]


@pytest.mark.parametrize("raw, message", [
    ("10×26", "expected a shape of 3 dimensions, e.g. 3×28×28; got 2"),
    ("10×26×26×1", "expected a shape of 3 dimensions, e.g. 3×28×28; got 4"),
    ("10.5×26×26", "'10.5' is not a size in '10.5×26×26': a shape is whole numbers separated by ×"),
    ("-10x26x26", "'-10' is not a size"),
    ("10××26", "a size is missing in '10××26'"),
    ("ten x 26 x 26", "'ten' is not a size"),
    ("()", "an empty shape: write its sizes, e.g. 3×28×28"),
    ([10.5, 26, 26], "10.5 is not a size: a shape is whole numbers, e.g. 3×28×28"),
    ([True, 26, 26], "true/false is not a size"),
    ("1" * 5000, "answer too long")])
def test_a_shape_that_is_not_one_is_refused_saying_why(raw, message):
    part = Part("conv_shape", "", "vector", [10, 26, 26], tolerance=EXACT, shape=(3,), tensor_shape=True)
    with pytest.raises(AnswerParseError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        parse_answer(part, raw)
    assert check_part(part, raw, {}).status == "unparseable"


def test_in_a_number_part_times_stays_multiplication():
    for kind, expected in (("number", 6760.0), ("integer", 6760)):
        part = Part("n", "", kind, expected, tolerance=EXACT)
        assert parse_answer(part, "10×26×26") == 6760
        assert check_part(part, "10×26×26", {}).status == "correct"
    plain = Part("v", "", "vector", [2.0, 3.0], tolerance=EXACT, shape=(2,))      # not a shape: a product per entry
    assert parse_answer(plain, "[2×1, 3]") == [2.0, 3.0]


def test_a_known_mistake_is_still_named_when_written_with_times(network):
    part, m = next((p, m) for p in network.parts if p.tensor_shape for m in p.misconceptions if m.id == "padding-once")
    r = check_part(part, "×".join(str(int(v)) for v in m.value), {})
    assert (r.status, r.misconception.id) == ("misconception", "padding-once")


def test_an_error_carried_forward_into_a_shape_written_with_x(network):
    shapes = [p for p in network.parts if p.tensor_shape]
    first, second = shapes[0], shapes[1]                     # conv2d 1, then the pool that halves it
    wrong = [first.expected[0] + 2, first.expected[1], first.expected[2]]
    earlier = {first.id: [float(v) for v in wrong]}
    carried = f"{wrong[0]}x{second.expected[1]}x{second.expected[2]}"
    r = check_part(second, carried, earlier)
    assert r.status == "ecf", r.feedback


def test_the_form_says_shape_and_never_asks_for_a_matrix(network):
    forms = {p.id: p.form() for p in network.parts if p.tensor_shape}
    assert forms["conv2d_1_shape"] == "shape C×H×W, e.g. 3×28×28"
    assert forms["flatten_shape"] == "shape F, e.g. 337"
    assert not any("[[" in f or "vector" in f for f in forms.values())
    mh = generators.mark_shapes(generators.build("multi-head", 0, 1))
    assert mh.part("query_shape").form() == "shape rows×columns, e.g. 7×12"


def test_a_list_of_shapes_reads_one_per_layer():
    assert read_shapes("3×28×28; 6×24×24; 864", 3) == [[3, 28, 28], [6, 24, 24], [864]]
    assert read_shapes("(3, 28, 28); [6, 24, 24]; 864;", 3) == [[3, 28, 28], [6, 24, 24], [864]]
    assert read_shapes("[[3, 28, 28], [6, 24, 24], [864]]", 3) == [[3, 28, 28], [6, 24, 24], [864]]
    assert read_shapes([[3, 28, 28], [6, 24, 24], 864], 3) == [[3, 28, 28], [6, 24, 24], [864]]
    with pytest.raises(AnswerParseError, match=r"expected 3 shapes \(one per layer, separated by ';'\), got 2"):
        read_shapes("3×28×28; 6×24×24", 3)
    with pytest.raises(AnswerParseError, match="'6.5' is not a size"):
        read_shapes("3×28×28; 6.5×24×24; 864", 3)
    with pytest.raises(AnswerParseError, match="write the shapes separated by ';'"):
        read_shapes("[[3, 28, 28], [6", 3)


def test_a_shapes_part_is_graded_shape_by_shape():
    part = Part("output_shapes", "", "shapes", [[3, 28, 28], [6, 24, 24], [864]], tolerance=EXACT, points=3)
    assert check_part(part, "3×28×28; 6×24×24; 864", {}).status == "correct"
    r = check_part(part, "3×28×28; 6×26×26; 864", {})
    assert (r.status, r.score, r.feedback) == ("wrong", 2.0, "2 of 3 shapes right; check shape 2")
    assert check_part(part, "", {}).status == "blank"
    assert check_part(part, "3×28", {}).status == "unparseable"
    assert read_shape("(10, 26, 26)", 3) == [10.0, 26.0, 26.0]


# issue 36's attack report, items 5, 7, 8 and 9
CONV = Part("conv_shape", "", "vector", [32, 5, 5], tolerance=EXACT, shape=(3,), tensor_shape=True)
LAYERS = Part("output_shapes", "", "shapes", [[6, 26, 26], [6, 13, 13], [1014], [10]], tolerance=EXACT, points=4)


@pytest.mark.parametrize("sign", ["·", "⋅", "✕", "⨯", "∗", " · "])
def test_a_dot_or_cross_for_times_separates_sizes(sign):
    assert parse_answer(CONV, sign.join(["32", "5", "5"])) == [32.0, 5.0, 5.0]
    assert check_part(LAYERS, f"6{sign}26{sign}26; 6{sign}13{sign}13; 1014; 10", {}).status == "correct"


@pytest.mark.parametrize("raw, message", [
    ("32×0×5", "'0' is not a size in '32×0×5': sizes are positive whole numbers, e.g. 3×28×28"),
    ([32, 0, 5], "0 is not a size: sizes are positive whole numbers, e.g. 3×28×28"),
    ("-10x26x26", "'-10' is not a size in '-10x26x26': sizes are positive whole numbers, e.g. 3×28×28"),
])
def test_a_zero_size_is_refused_like_a_negative_one(raw, message):
    with pytest.raises(AnswerParseError) as err:
        parse_answer(CONV, raw)
    assert str(err.value) == message
    with pytest.raises(AnswerParseError, match="'0' is not a size in '0': sizes are positive whole numbers"):
        read_shapes("6×26×26; 6×13×13; 1014; 0", 4)


@pytest.mark.parametrize("written", ["1,014", "1 014"])
def test_a_size_with_its_thousands_grouped_in_a_list_of_shapes_is_refused_as_ambiguous(written):
    answer = f"6×26×26; 6×13×13; {written}; 10"
    r = check_part(LAYERS, answer, {})
    assert (r.status, r.feedback) == ("unparseable", f"{written!r} is ambiguous: the size 1014 with its thousands "
                                                     "grouped, or the shape 1×14? write 1014 (no separator inside a size) "
                                                     "or 1×14")
    assert check_part(LAYERS, answer.replace(written, "1014"), {}).status == "correct"
    flatten = Part("flatten_shape", "", "vector", [1014], tolerance=EXACT, shape=(1,), tensor_shape=True)
    with pytest.raises(AnswerParseError, match="is ambiguous: the size 1014"):
        parse_answer(flatten, written)


def test_sizes_of_three_digits_stay_a_shape_where_the_key_has_as_many_dimensions():
    image = Part("input_shape", "", "vector", [3, 224, 224], tolerance=EXACT, shape=(3,), tensor_shape=True)
    assert parse_answer(image, "3 224 224") == [3.0, 224.0, 224.0]
    assert parse_answer(image, "3,224,224") == [3.0, 224.0, 224.0]
    matrix = Part("scores_shape", "", "vector", [1, 500], tolerance=EXACT, shape=(2,), tensor_shape=True)
    assert parse_answer(matrix, "1,500") == [1.0, 500.0]
    with pytest.raises(AnswerParseError, match="'1,014' is ambiguous"):          # no size is written 014
        parse_answer(matrix, "1,014")


@pytest.mark.parametrize("part, raw, message", [
    (CONV, "[32][5][5]", "']' at column 4 in '[32][5][5]': write a shape in one pair of brackets, e.g. [3, 28, 28], "
                         "or as sizes separated by ×, e.g. 3×28×28"),
    (CONV, "32÷5÷5", "'÷' at column 3 in '32÷5÷5' is neither a digit nor a separator: a shape is whole numbers "
                     "separated by ×, e.g. 3×28×28"),
    (CONV, "32 x 5 x 5a", "'a' at column 11 in '32 x 5 x 5a' is neither a digit nor a separator"),
    (LAYERS, "[6, 26, 26], [6, 13, 13], [1014], [10]",
     "']' at column 11 in '[6, 26, 26], [6, 13, 13], [1014], [10]': write each shape in one pair of brackets or none, "
     "the shapes separated by ';', e.g. [3, 28, 28]; [6, 24, 24]; [864] or 3×28×28; 6×24×24; 864"),
    (LAYERS, "6×26×26; 6×13×13; 10.5; 10", "'10.5' is not a size in '10.5': a shape is whole numbers separated by ×, "
                                           "and shapes are separated by ';', e.g. 3×28×28; 6×24×24; 864"),
])
def test_an_unreadable_shape_names_the_piece_and_the_form_expected(part, raw, message):
    with pytest.raises(AnswerParseError) as err:
        parse_answer(part, raw)
    assert str(err.value).startswith(message), str(err.value)
