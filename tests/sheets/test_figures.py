"""Solution figures: attention weights get a heatmap, other answers do not (the receptive-field figure
is its generator's own: tests/generators/test_receptive_field.py)."""
from examprep import generators, sheets
from examprep.document import Heatmap


def test_heatmaps_only_for_probability_matrices():
    att = generators.build("attention", 2, 2)
    extras = sheets.solution_extras([att, generators.build("gru-step", 2, 2)])
    assert list(extras) == [0]
    maps = [e for e in extras[0] if isinstance(e, Heatmap)]
    assert len(maps) == 1 and maps[0].values == att.part("weights").expected
    assert maps[0].row_labels == ["t1", "t2", "t3"]
