"""LoRA (examprep.train.lora) and `examprep finetune`: adapters on the fused projections' rows, the
counts `examprep solve lora` gives, merging, adapter-only checkpoints that resume, bad input."""
from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from examprep.cli import app
from examprep.train import checkpoint
from examprep.train.finetune import read_adapter
from examprep.train.lora import add_adapters, merge
from examprep.train.model import build_model

from .helpers import small_config

runner = CliRunner()
BASE = ["--d-model", "16", "--heads", "2", "--d-ff", "32", "--batch-tokens", "300", "--eval-size", "10"]
FT = ["--batch-tokens", "300", "--eval-size", "10", "--eval-every", "5", "--task", "dates-dmy", "--threads", "1"]


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def solve_lora(d: int, k: int, r: int, count: int) -> dict:
    res = run("solve", "lora", "--json", "-p", json.dumps({"d": d, "k": k, "r": r, "num_matrices": count}))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["answer"]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    out = tmp_path_factory.mktemp("lora") / "dates"
    res = run("train", *BASE, "--steps", "3", "--out", out)
    assert res.exit_code == 0, res.output
    return out


def _inputs(cfg):
    g = torch.Generator().manual_seed(3)
    return (torch.randint(5, cfg.src_vocab_size, (3, 7), generator=g),
            torch.randint(5, cfg.tgt_vocab_size, (3, 6), generator=g))


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
@pytest.mark.parametrize("targets", [("q", "v"), ("q", "k", "v", "o")])
def test_adapters_start_as_the_base_model_and_merge_into_the_same_outputs(arch, targets):
    model = build_model(small_config(arch=arch)).eval()
    src, tgt = _inputs(model.cfg)
    call = (lambda m: m(src, tgt)) if arch == "encoder-decoder" else (lambda m: m(tgt))
    before = call(model)
    adapted = add_adapters(model, rank=3, alpha=6.0, targets=targets)
    torch.testing.assert_close(call(model), before, rtol=0, atol=0)              # B = 0: the base model exactly
    assert all(not p.requires_grad for n, p in model.named_parameters() if "lora_" not in n)
    with torch.no_grad():
        for p in adapted.parameters():
            p.normal_(0, 0.3)
    with_adapter = call(model)
    assert (with_adapter - before).abs().max() > 1e-2
    merge(model)
    assert not any("lora_" in k or "parametrizations" in k for k in model.state_dict())
    torch.testing.assert_close(call(model), with_adapter, rtol=1e-5, atol=1e-5)
    fresh = build_model(model.cfg)                                                 # a plain model loads it
    fresh.load_state_dict(model.state_dict())


def test_each_target_changes_only_its_rows_of_the_fused_weights_by_alpha_over_r_times_BA():
    model = build_model(small_config()).eval()
    d = model.cfg.d_model
    w_self = model.encoder.layers[0].self_attn.qkv_proj.weight.detach().clone()
    w_kv = model.decoder.layers[0].cross_attn.kv_proj.weight.detach().clone()
    w_q = model.decoder.layers[0].cross_attn.q_proj.weight.detach().clone()
    adapted = add_adapters(model, rank=2, alpha=5.0, targets=("q", "v"))
    with torch.no_grad():
        for p in adapted.parameters():
            p.normal_()
    tensors = adapted.state_dict()
    a, b = tensors["encoder.layers.0.self_attn.v.lora_A"], tensors["encoder.layers.0.self_attn.v.lora_B"]
    assert a.shape == (2, d) and b.shape == (d, 2)                                 # A r×k, B d×r
    merge(model)
    delta = model.encoder.layers[0].self_attn.qkv_proj.weight.detach() - w_self
    assert delta[d:2 * d].abs().max() == 0                                         # k untouched
    torch.testing.assert_close(delta[2 * d:], 2.5 * b @ a)                         # v rows: (α/r)·B A
    assert delta[:d].abs().max() > 0
    cross_delta = model.decoder.layers[0].cross_attn.kv_proj.weight.detach() - w_kv
    assert cross_delta[:d].abs().max() == 0 and cross_delta[d:].abs().max() > 0    # cross: only v of [k; v]
    assert (model.decoder.layers[0].cross_attn.q_proj.weight.detach() - w_q).abs().max() > 0


def test_the_trainable_count_is_solve_loras_for_every_target_set():
    for arch, blocks in (("encoder-decoder", 2 + 2 + 2), ("decoder-only", 2)):
        for targets in (("q", "v"), ("q",), ("q", "k", "v", "o")):
            model = build_model(small_config(arch=arch))
            adapted = add_adapters(model, rank=4, alpha=4.0, targets=targets)
            d = model.cfg.d_model
            assert adapted.count == blocks * len(targets)
            answer = solve_lora(d, d, 4, adapted.count)
            assert adapted.trainable == answer["trainable_params"]
            assert adapted.full == answer["full_params"]


def test_finetune_prints_solve_loras_counts_and_saves_only_the_adapter(base, tmp_path):
    out = tmp_path / "ft"
    res = run("finetune", "-c", base, "--lora-rank", "4", "--lora-alpha", "8", *FT, "--steps", "5", "--out", out)
    assert res.exit_code == 0, res.output
    answer = solve_lora(16, 16, 4, 6)                 # 1 encoder self-, 1 decoder self-, 1 cross-attention; q and v
    assert f"trainable parameters: {answer['trainable_params']:,} = 6 matrices × r(d + k)" in res.stdout
    assert f"full fine-tuning of those matrices: {answer['full_params']:,} = 6 × d·k" in res.stdout
    total = checkpoint.load(base).model.num_params(count_position_tables=True)
    assert f"the model: {total:,} (" in res.stdout
    # measured: two fp32 moments of the 768 numbers, and one fp32 step count per A and per B (6 each)
    assert f"AdamW state: {8 * 768 + 4 * 12:,} bytes, measured" in res.stdout
    step_dir = out / "step-000005"
    assert sorted(p.name for p in step_dir.iterdir()) == ["adapter.json", "adapter.safetensors", "trainer.pt"]
    _, meta, tensors = read_adapter(out)
    assert sum(t.numel() for t in tensors.values()) == answer["trainable_params"]
    assert (meta["rank"], meta["alpha"], meta["targets"], meta["matrices"]) == (4, 8.0, ["q", "v"], 6)
    assert set(meta["files"]) == {"adapter.safetensors", "trainer.pt"}
    # the base is untouched and the adapter holds its values (B moved away from 0)
    assert any(k.endswith("lora_B") and t.abs().max() > 0 for k, t in tensors.items())
    # a changed adapter file is refused, naming it
    (step_dir / "adapter.safetensors").write_bytes((step_dir / "adapter.safetensors").read_bytes()[:-1] + b" ")
    res = run("finetune", "-c", base, "--lora-rank", "4", "--lora-alpha", "8", *FT, "--steps", "6", "--out", out,
              "--resume")
    assert res.exit_code == 2 and "adapter.safetensors changed after it was written" in res.stderr


def test_adapter_only_checkpoints_resume_to_the_uninterrupted_run(base, tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    common = ["finetune", "-c", base, "--lora-rank", "2", *FT]
    assert run(*common, "--steps", "10", "--out", straight).exit_code == 0
    assert run(*common, "--steps", "5", "--out", resumed).exit_code == 0
    res = run(*common, "--steps", "10", "--out", resumed, "--resume")
    assert res.exit_code == 0, res.output
    assert "stopped at step 10 (reached --steps)" in res.stdout
    a, b = read_adapter(straight)[2], read_adapter(resumed)[2]
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=1e-6)
    # resuming on other base weights is refused
    other = tmp_path / "other"
    assert run("train", *BASE, "--steps", "3", "--seed", "1", "--out", other).exit_code == 0
    res = run("finetune", "-c", other, "--lora-rank", "2", *FT, "--steps", "12", "--out", resumed, "--resume")
    assert res.exit_code == 2 and "was trained on other weights" in res.stderr
    # translate with an adapter whose base changed: one line, not a model with the wrong weights
    base_weights = checkpoint.latest(base) / "model.safetensors"
    saved = base_weights.read_bytes()
    try:
        base_weights.write_bytes(saved[:-4] + b"\x00\x00\x00\x00")
        res = run("translate", "-c", resumed, "29 Nov 2026")
        assert res.exit_code == 2 and "changed after the adapter" in res.stderr and len(res.stderr.splitlines()) == 1
    finally:
        base_weights.write_bytes(saved)


def test_merge_writes_a_plain_checkpoint_with_the_adapter_models_outputs(base, tmp_path):
    out = tmp_path / "ft"
    res = run("finetune", "-c", base, "--lora-rank", "4", *FT, "--steps", "5", "--out", out, "--merge")
    assert res.exit_code == 0, res.output
    assert f"merged model: {out / 'merged' / 'step-000005'}" in res.stdout
    merged = checkpoint.load(out / "merged")
    from examprep.train.finetune import apply_adapter

    adapted = checkpoint.load(base).model
    step_dir, meta, tensors = read_adapter(out)
    apply_adapter(adapted, meta, tensors, step_dir)
    src, tgt = _inputs(merged.config)
    with torch.no_grad():
        torch.testing.assert_close(merged.model(src, tgt), adapted.eval()(src, tgt), rtol=1e-5, atol=1e-5)
    dates = ["29 Nov 2026", "Sunday, 1 March 1925", "3/4/2001"]
    merged_out = run("translate", "-c", out / "merged", *dates)
    adapter_out = run("translate", "-c", out, *dates)             # the adapter directory: base + adapter
    assert merged_out.exit_code == 0 and adapter_out.exit_code == 0, adapter_out.output
    assert adapter_out.stdout == merged_out.stdout and len(adapter_out.stdout.splitlines()) == 3


def test_full_fine_tuning_trains_every_weight_and_writes_a_checkpoint(base, tmp_path):
    out = tmp_path / "full"
    res = run("finetune", "-c", base, "--full", *FT, "--steps", "5", "--out", out)
    assert res.exit_code == 0, res.output
    total = checkpoint.load(base).model.num_params(count_position_tables=True)
    assert f"trainable parameters: {total:,} (every weight of the model)" in res.stdout
    tensors = len({id(p) for p in checkpoint.load(base).model.parameters()})
    assert f"AdamW state: {8 * total + 4 * tensors:,} bytes" in res.stdout
    after = checkpoint.load(out)
    before = checkpoint.load(base)
    changed = [k for k, v in after.model.state_dict().items() if not torch.equal(v, before.model.state_dict()[k])]
    assert len(changed) > 10


def test_bad_finetune_input_is_one_line_before_any_work(base, tmp_path):
    mlm = tmp_path / "mlm"
    (tmp_path / "s.tsv").write_text("a b c .\td e f .\n", encoding="utf-8")
    assert run("train", "--arch", "encoder-only", "--objective", "mlm", "--corpus", tmp_path / "s.tsv",
               "--d-model", "16", "--heads", "2", "--d-ff", "16", "--steps", "1", "--heldout", "0",
               "--out", mlm).exit_code == 0
    never = tmp_path / "never"
    cases = [
        (["-c", base, "--lora-rank", "17"], "--lora-rank 17 is above min(d, k) = 16"),
        (["-c", base, "--lora-rank", "0"], "--lora-rank must be at least 1"),
        (["-c", base, "--lora-rank", "2", "--targets", "q,x"], "unknown target 'x'; choose from q, k, v, o"),
        (["-c", base, "--lora-rank", "2", "--targets", "q,q"], "names a projection twice"),
        (["-c", mlm, "--lora-rank", "2"], "is an encoder-only masked LM; finetune adapts a sequence-to-sequence"),
        (["-c", base, "--lora-rank", "2", "--full"], "not both"),
        (["-c", base], "--lora-rank R is required"),
        (["-c", base, "--lora-rank", "2", "--lora-alpha", "0"], "--lora-alpha must be a finite positive number"),
        (["-c", base, "--lora-rank", "2", "--lr", "inf"], "--lr must be a finite positive number, got inf"),
        (["-c", base, "--lora-rank", "2", "--minutes", "nan"], "--minutes must be a finite positive number, got nan"),
        (["-c", tmp_path / "missing", "--lora-rank", "2"], "does not exist"),
    ]
    for args, said in cases:
        res = run("finetune", *args, "--out", never)
        assert res.exit_code == 2, (args, res.output)
        assert said in res.stderr and len(res.stderr.splitlines()) == 1, (args, res.stderr)
        assert not never.exists()


@pytest.mark.parametrize("field, value, message", [
    ("rank", -4, "rank must be a whole number of at least 1, got -4"),
    ("rank", 99, "the adapter does not fit this model"),
    ("alpha", 0, "alpha must be a positive number, got 0"),
    ("targets", "q", "targets must be a list of projections"),
])
def test_an_edited_adapter_json_is_one_line_naming_it(base, tmp_path, field, value, message):
    # adapter.json holds the other files' checksums, not its own: its fields are checked on reading
    out = tmp_path / "ft"
    assert run("finetune", "-c", base, "--lora-rank", "2", *FT, "--steps", "1", "--out", out).exit_code == 0
    meta_path = out / "step-000001" / "adapter.json"
    meta = json.loads(meta_path.read_text())
    meta[field] = value
    meta_path.write_text(json.dumps(meta))
    res = run("translate", "-c", out, "29 Nov 2026")
    assert res.exit_code == 2 and message in res.stderr, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_commands_that_need_a_model_name_an_adapter_directory_as_one(base, tmp_path):
    out = tmp_path / "ft"
    assert run("finetune", "-c", base, "--lora-rank", "2", *FT, "--steps", "1", "--out", out).exit_code == 0
    for args in (["fill-mask", "-c", out, "a [MASK] b"], ["verify", "--checkpoint", out],
                 ["finetune", "-c", out, "--lora-rank", "2", "--steps", "1", "--out", tmp_path / "again"]):
        res = run(*args)
        assert res.exit_code == 2 and "is a LoRA adapter (examprep finetune), not a model checkpoint" in res.stderr, \
            (args, res.output)
        assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("held, flags, message", [
    ("adapter.json", ["--full"], "is a LoRA run (step-000004 holds an adapter); resume it without --full"),
    ("config.json", ["--lora-rank", "2"], "is a --full run (step-000004 holds a whole model); add --full"),
])
def test_resume_of_the_other_kind_of_finetune_run_says_which_it_is(base, tmp_path, held, flags, message):
    """--full --resume on a LoRA run used to say its step directory 'holds no checkpoint … train one
    with examprep train', and LoRA on a --full run 'holds no LoRA adapter … write one with examprep
    finetune'. The run directory is written here; the refusal comes before its files are read."""
    out = tmp_path / "ft"
    (out / "step-000004").mkdir(parents=True)
    (out / "step-000004" / held).write_text("{}", encoding="utf-8")
    (out / "latest").write_text("step-000004\n", encoding="utf-8")
    res = run("finetune", "-c", base, *flags, *FT, "--steps", "8", "--out", out, "--resume")
    assert res.exit_code == 2 and res.stderr.strip() == f"error: --resume{' --full' * (held == 'adapter.json')}: " \
        f"{out} {message}, or " + ("fine-tune every weight into another --out" if held == "adapter.json" else
                                    "train an adapter into another --out"), res.stderr
    assert (out / "step-000004" / held).read_text(encoding="utf-8") == "{}"
