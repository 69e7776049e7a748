"""A trained model at work: attention maps, the dates alignment rate, and problems drawn from a
trained head (issue 9). `verify` has its own module (tests/verify/test_verify.py)."""
import json

import numpy as np
import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from examprep import generators  # noqa: E402
from examprep.cli import app  # noqa: E402
from examprep.errors import ParamError  # noqa: E402
from examprep.generators.attention_from_model import head_qkv, load_checkpoint  # noqa: E402
from examprep.train import attention_map  # noqa: E402
from examprep.train.layers import apply_rope, attend  # noqa: E402
from examprep.train.serve import Translator  # noqa: E402

runner = CliRunner()


# ---------------------------------------------------------------------------------- alignment

def test_date_fields_for_every_layout():
    assert attention_map.date_fields("29 Nov 2026") == {"day": {0, 1}, "month": {3, 4, 5}, "year": {7, 8, 9, 10}}
    assert attention_map.date_fields("November 29, 2026") == {"month": set(range(8)), "day": {9, 10}, "year": set(range(13, 17))}
    assert attention_map.date_fields("29/11/2026") == {"day": {0, 1}, "month": {3, 4}, "year": set(range(6, 10))}
    assert attention_map.date_fields("2026/11/29") == {"year": {0, 1, 2, 3}, "month": {5, 6}, "day": {8, 9}}
    assert attention_map.date_fields("Sun, 29 Nov 2026")["month"] == {8, 9, 10}      # the weekday belongs to no field
    assert attention_map.date_fields("no date here") is None


def test_alignment_rate_on_a_hand_made_attention_matrix():
    source, output = "29 Nov 2026", "2026-11-29"
    fields = attention_map.date_fields(source)
    w = np.zeros((len(output) + 1, len(source) + 1))
    target = {"year": 8, "month": 4, "day": 0}
    for pos, field in attention_map.OUTPUT_FIELD.items():
        w[pos, target[field]] = 1.0
    w[4, 2] = w[7, 2] = 1.0                       # separators: not counted
    assert attention_map.alignment_hits(w, source, output) == (8, 8)
    w[0] = 0
    w[0, 1] = 1.0                                  # the first year digit looks at the day: a miss
    w[9] = 0
    w[9, 5] = 1.0                                  # the last day digit looks at the month: a miss
    assert attention_map.alignment_hits(w, source, output) == (6, 8)
    assert fields is not None
    assert attention_map.alignment_hits(w, source, "not a date") == (0, 0)


# ---------------------------------------------------------------------------------- attention-map

def test_attention_maps_of_a_trained_model_sum_to_one(tiny_dates):
    att = attention_map.model_attention(Translator.load(tiny_dates), "29 Nov 2026")
    kinds = {(m.kind, m.layer) for m in att.maps}
    assert kinds == {("encoder self", 0), ("decoder self", 0), ("cross", 0)}
    for m in att.maps:
        assert m.weights.shape[1:] == (len(m.row_labels), len(m.col_labels))
        np.testing.assert_allclose(m.weights.sum(-1), 1.0, rtol=1e-5)


def test_attention_map_cli_terminal_pdf_and_png(tiny_dates, tmp_path):
    res = runner.invoke(app, ["attention-map", "--checkpoint", str(tiny_dates), "29 Nov 2026", "--alignment", "5",
                              "--no-color", "--out", str(tmp_path / "map.pdf")])
    assert res.exit_code == 0, res.output
    assert "cross_attn" in res.output and "head 0" in res.output and "alignment rate on 5 held-out dates" in res.output
    assert (tmp_path / "map.pdf").read_bytes().startswith(b"%PDF")
    res = runner.invoke(app, ["attention-map", "--checkpoint", str(tiny_dates), "1 Jan 2000", "--kind", "encoder",
                              "--head", "1", "--out", str(tmp_path / "map.png"), "--alignment", "0"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "map.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("args,fragment", [
    (["--kind", "sideways"], "--kind"), (["--layer", "5"], "--layer"), (["--head", "9"], "--head"),
    (["--out", "map.svg"], "--out"),
])
def test_attention_map_bad_options(tiny_dates, args, fragment):
    res = runner.invoke(app, ["attention-map", "--checkpoint", str(tiny_dates), "1 Jan 2000", *args])
    assert res.exit_code == 2 and fragment in res.output and "Traceback" not in res.output


def test_attention_map_missing_checkpoint(tmp_path):
    res = runner.invoke(app, ["attention-map", "--checkpoint", str(tmp_path / "none"), "x"])
    assert res.exit_code != 0 and "Traceback" not in res.output


# ------------------------------------------------------------------------- attention-from-model

def test_generator_needs_a_checkpoint_and_says_how_to_train_one():
    with pytest.raises(ParamError, match="examprep train"):
        generators.build("attention-from-model", 1, 1)
    res = runner.invoke(app, ["generate", "attention-from-model", "--seed", "1"])
    assert res.exit_code == 2 and "examprep train" in res.output


def test_generator_is_left_out_of_self_contained_topics_but_listed():
    assert "attention-from-model" not in generators.load_all()
    listing = json.loads(runner.invoke(app, ["topics", "--json"]).output)
    assert any(t["topic"] == "attention-from-model" and t["requires"] == ["checkpoint"] for t in listing)


def test_numpy_projections_equal_the_torch_model(tiny_dates):
    ck = load_checkpoint(tiny_dates)
    model = Translator.load(tiny_dates).model
    text = "17 Nov 2037"
    vocab = ck.stored.source_vocab
    ids = torch.tensor([vocab.encode(text) + [vocab.index["<eos>"]]])
    pos = torch.arange(ids.shape[1])
    with torch.no_grad():
        x = model.embed(model.src_embed, ids, pos)
        attn = model.encoder.layers[0].self_attn
        d = x.shape[-1]
        qkv = torch.nn.functional.linear(x, attn.qkv_proj.weight)
        q = qkv[..., :d] + attn.q_bias
        k = qkv[..., d:2 * d]
        v = qkv[..., 2 * d:] + attn.v_bias
        heads = lambda t: attn._heads(t, 1)[0]            # (B, H, T, Dh)
        q, k, v = heads(q), heads(k), heads(v)
        rot = model.positions.rotation(pos)
        if rot is not None:
            q, k = apply_rope(q, *rot), apply_rope(k, *rot)
    for h in range(q.shape[1]):
        nq, nk, nv, _ = head_qkv(ck, text, h)
        np.testing.assert_allclose(nq, q[0, h].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(nk, k[0, h].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(nv, v[0, h].numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_generated_answer_matches_the_models_explicit_attention_path(tiny_dates, level):
    opts = {"checkpoint": str(tiny_dates)}
    p = generators.build("attention-from-model", 11, level, options=opts)
    assert p == generators.build("attention-from-model", 11, level, options=opts)      # deterministic
    assert p.params["checkpoint_sha256"] == load_checkpoint(tiny_dates).sha256
    Q, K, V = (torch.tensor(p.params[n], dtype=torch.float64)[None, None] for n in ("query", "key", "value"))
    out, weights = attend(Q, K, V, need_weights=True)
    # the model computes its softmax in float32: agreement to float32 precision
    np.testing.assert_allclose(p.part("weights").expected, weights[0, 0].numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(p.part("output").expected, out[0, 0].numpy(), rtol=1e-6, atol=1e-6)
    for part in p.parts:
        for m in part.misconceptions:
            assert not np.allclose(np.asarray(m.value, dtype=float), np.asarray(part.expected, dtype=float))


def test_generate_cli_with_checkpoint_shows_a_clean_problem(tiny_dates):
    res = runner.invoke(app, ["generate", "attention-from-model", "--checkpoint", str(tiny_dates), "--seed", "4",
                              "--solution", "--no-color"])
    assert res.exit_code == 0, res.output
    assert "first encoder layer" in res.output and "worked solution" in res.output


@pytest.mark.parametrize("level", [1, 2, 3])
def test_no_generated_problem_asks_the_same_computation_twice(tiny_dates, level):
    # two queries with equal weight rows (or a row of equal scores) make a degenerate exercise
    for seed in range(30):
        p = generators.build("attention-from-model", seed, level, options={"checkpoint": str(tiny_dates)})
        weights = np.asarray(p.part("weights").expected)
        scores = np.asarray(p.part("scaled_scores").expected)
        assert len({tuple(np.round(r, 9)) for r in weights}) == len(weights), (seed, weights)
        assert all(np.ptp(r) > 0 for r in scores), (seed, scores)


# ------------------------------------------------- attention-from-model: damaged and foreign checkpoints

def _copy_checkpoint(src, dest):
    """A copy of a run directory and its step directory (the one `latest` names)."""
    import shutil

    shutil.copytree(src, dest)
    return dest, dest / (dest / "latest").read_text(encoding="utf-8").strip()


def _generate(checkpoint):
    return runner.invoke(app, ["generate", "attention-from-model", "--checkpoint", str(checkpoint), "--seed", "1",
                               "--solution", "--no-color"])


def _damage_weights(step, how):
    f = step / "model.safetensors"
    data = f.read_bytes()
    f.write_bytes({"truncated": data[:len(data) // 2], "header-only": data[:100], "empty": b"",
                   "random": np.random.default_rng(0).bytes(4096)}[how])
    return f


@pytest.mark.parametrize("how", ["truncated", "header-only", "empty", "random"])
def test_damaged_weights_give_one_error_line_naming_the_file(tiny_dates, tmp_path, how):
    run, step = _copy_checkpoint(tiny_dates, tmp_path / "run")
    f = _damage_weights(step, how)
    res = _generate(run)
    assert res.exit_code == 2, res.output                     # bad input, as `translate` exits
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), res.exception
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and str(f) in lines[0], res.output
    assert "cannot be read" in lines[0] and "Traceback" not in res.output


@pytest.mark.parametrize("name,content,fragment", [
    ("config.json", "{\"format\": ", "config.json cannot be read as JSON"),
    ("config.json", "[]", "config.json should hold a JSON object"),
    ("config.json", "{\"model\": {\"arch\": \"encoder-decoder\"}}", "is not an examprep checkpoint config"),
    ("config.json", "{\"format\": \"examprep-transformer\", \"version\": 1, \"model\": {\"arch\": \"encoder-decoder\", "
                    "\"bogus\": 1}}", "config.json: bad model config"),
    ("config.json", "{\"format\": \"examprep-transformer\", \"version\": 1, \"model\": {\"arch\": \"encoder-decoder\", "
                    "\"d_model\": 30, \"n_heads\": 4, \"positions\": \"rope\", \"norm\": \"post\"}}",
     "config.json: bad model config"),
    ("vocab.json", "\xff\xfe", "vocab.json cannot be read as JSON"),
    ("vocab.json", "{\"target\": {}}", "vocab.json: bad vocabulary"),
    ("vocab.json", None, "missing vocab.json"),
    ("config.json", None, "is missing config.json"),
])
def test_damaged_config_or_vocabulary_give_one_error_line(tiny_dates, tmp_path, name, content, fragment):
    run, step = _copy_checkpoint(tiny_dates, tmp_path / "run")
    if name == "vocab.json":         # as an older checkpoint, without the hashes: the file's content is checked
        meta = json.loads((step / "config.json").read_text(encoding="utf-8"))
        del meta["files"]
        (step / "config.json").write_text(json.dumps(meta), encoding="utf-8")
    if content is None:
        (step / name).unlink()
    else:
        (step / name).write_text(content, encoding="latin-1")
    res = _generate(run)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], res.output


def test_config_that_does_not_fit_the_weights_is_an_error_not_a_traceback(tiny_dates, tmp_path):
    run, step = _copy_checkpoint(tiny_dates, tmp_path / "run")
    meta = json.loads((step / "config.json").read_text(encoding="utf-8"))
    meta["model"]["d_model"] = 64
    (step / "config.json").write_text(json.dumps(meta), encoding="utf-8")
    res = _generate(run)
    assert res.exit_code == 2 and "config.json does not match model.safetensors" in res.output, res.output


def test_a_model_of_another_task_is_refused_with_the_dates_task_named(tmp_path):
    out = tmp_path / "reverse"
    # trained in this process (the command, not a subprocess: a second torch import cost more than the step)
    res = runner.invoke(app, ["train", "--task", "reverse", "--steps", "1", "--d-model", "16", "--layers", "1",
                              "--heads", "2", "--d-ff", "32", "--out", str(out), "--eval-every", "1", "--eval-size", "10"])
    assert res.exit_code == 0, res.output
    res = _generate(out)
    assert res.exit_code == 2, res.output
    assert "trained on the dates task" in res.output and "examprep train" in res.output and "'reverse'" in res.output
    assert "lacks" not in res.output


def test_a_corpus_model_without_the_dates_characters_is_refused_with_the_dates_task_named(tiny_dates, tmp_path):
    run, step = _copy_checkpoint(tiny_dates, tmp_path / "run")
    meta = json.loads((step / "config.json").read_text(encoding="utf-8"))
    meta["data"].update(kind="corpus", task=None)
    meta.pop("files")             # as an older checkpoint, recorded no hash of the vocabulary changed below
    (step / "config.json").write_text(json.dumps(meta), encoding="utf-8")
    vocab = json.loads((step / "vocab.json").read_text(encoding="utf-8"))
    vocab["source"]["tokens"] = ["§" if t == " " else t for t in vocab["source"]["tokens"]]
    (step / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    res = _generate(run)
    assert res.exit_code == 2 and "trained on the dates task" in res.output and "lacks ' '" in res.output, res.output


# ------------------------------------------------------- attention-from-model: no degenerate draw

def test_every_draw_has_distinct_nonzero_rows_live_dimensions_and_no_negative_zero(tiny_dates):
    """Seeds 0-59 at every level: every row of Q, K and V nonzero and distinct (equal value rows make
    equal outputs; equal key rows one key asked twice), every kept dimension nonzero somewhere in Q
    and in K (the statement says they carry most of q·k), no query within one rounding step of zero,
    and no -0.0 anywhere in the problem."""
    import re

    opts = {"checkpoint": str(tiny_dates)}
    for level in (1, 2, 3):
        for seed in range(60):
            p = generators.build("attention-from-model", seed, level, options=opts)
            assert p.version == 5
            Q, K, V = (np.asarray(p.params[n], dtype=float) for n in ("query", "key", "value"))
            for name, m in (("Q", Q), ("K", K), ("V", V)):
                assert np.all(np.any(m, axis=1)), (seed, level, name, m)
                assert len({tuple(r) for r in m.tolist()}) == len(m), (seed, level, name, m)
            assert np.all(np.any(Q, axis=0)) and np.all(np.any(K, axis=0)), (seed, level, Q, K)
            assert np.all(np.max(np.abs(Q), axis=1) >= 1), (seed, level, Q)
            text = json.dumps(p.to_dict(), ensure_ascii=False)
            assert not re.search(r"-0\.0(?![0-9])", text), (seed, level)
