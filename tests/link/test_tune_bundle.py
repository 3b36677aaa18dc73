"""Tuning for a model from the build machine, without a GPU: `tools/tune LABEL FLAGS` and `bazel
run @rules_triton//tools:tune -- DIR FLAGS` (tools/tune_bundle.py) check the tuning command's
flags (triton_aot.tuning.tune_flags), copy the model's config.json into the bundle and write the
flags into its tune.sh; tune.sh, run on three fake GPUs (the stub torch and fake driver of
test_tune_command), writes the same table as the tuning command given those flags directly."""

from __future__ import annotations

import json
import subprocess

import pytest

from test_tune_command import fake_gpu_env, run_tune, tune_bundle, tuning_outputs
from triton_aot.contract import tuning_table as tuning
from triton_aot.core.errors import UserError
from triton_aot.tuning import tune_flags

# A small decoder: q/o 64x64, k/v 32x64, qkv 128x64, gate/up 96x64, gate_up 192x64, down 64x96,
# lm_head 160x64 (at M <= 256 only)
CONFIG = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
          "intermediate_size": 96, "vocab_size": 160}
MODEL_FLAGS = ("--batch=1:4096", "--batch_count=3", "--gpus=3", "--missing_only")


def test_flags_parse_back_to_themselves():
    flags, rest = tune_flags.parse(["--model_config", "c.json", "--jobs=2", "//a:b", "--batch=1:64",
                                    "--missing_only", "--nomissing_only", "--reps=3"])
    assert rest == ["--jobs=2", "//a:b"]
    assert flags == tune_flags.TuneFlags(model_config="c.json", batch="1:64", reps=3)
    assert tune_flags.parse(flags.argv())[0] == flags
    assert flags.argv() == ["--reps=3", "--model_config=c.json", "--batch=1:64"]
    with pytest.raises(UserError, match="--batch_count='0': give at least 1"):
        tune_flags.parse(["--batch_count=0"])
    with pytest.raises(UserError, match="--budget_s needs a value"):
        tune_flags.parse(["--budget_s"])


def test_tune_sh_on_fake_gpus_tunes_the_model_as_the_direct_command(tmp_path, fake_dir):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    flags, rest = tune_flags.parse([f"--model_config={config}", *MODEL_FLAGS, "--reps=3"])
    assert rest == []
    # the build machine: packed with the flags, the config copied in
    built = tmp_path / "built"
    bundle = tune_bundle.pack_tuning("//pkg:mm", tuning_outputs(built), tmp_path / "DIR", None,
                                     flags=flags)
    assert (bundle / "model_config.json").read_bytes() == config.read_bytes()
    script = (bundle / "tune.sh").read_text()
    command = [line for line in script.splitlines() if "triton_aot.tuning.tune" in line]
    assert len(command) == 1, script
    assert ('python3 -m triton_aot.tuning.tune "$b" --model_config="$b"/model_config.json '
            '--reps=3 --missing_only --batch=1:4096 --batch_count=3 --gpus=3 "$@"') in command[0]
    assert str(config) not in script  # the bundle's own copy: the GPU machine needs nothing else

    # the GPU machine (three fake GPUs), from another folder, the user's config gone
    config.unlink()
    gpu_machine = tmp_path / "gpu_machine"
    gpu_machine.mkdir()
    out = tmp_path / "bundle_table.json"
    p = subprocess.run(["sh", str(bundle / "tune.sh"), f"--out={out}"], cwd=gpu_machine,
                       capture_output=True, text=True, env=fake_gpu_env(gpu_machine, fake_dir),
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "3 GPUs (0, 1, 2), one tuning process each" in p.stderr
    table = tuning.read_table(out)
    layers = [(64, 64), (32, 64), (128, 64), (96, 64), (192, 64), (64, 96)]
    assert sorted(q.key for q in table.device(90).points) == sorted(
        [(m, n, k) for n, k in layers for m in (1, 64, 4096)] + [(1, 160, 64), (64, 160, 64)])
    assert table.device(80) is not None  # the packed table's other SM

    # the tuning command given the same flags directly, on an identical pack
    config.write_text(json.dumps(CONFIG))
    _, direct = run_tune(tmp_path / "direct", fake_dir,
                         flags=(f"--model_config={config}", *MODEL_FLAGS))
    assert table.to_json() == direct.to_json()


@pytest.mark.parametrize("args, culprit, fix", [
    (("--layers=4096",), "--layers: '4096' is not NxK", "e.g. 4096x4096,1024x4096"),
    (("--model_config={bert}",), "bert.json: needs hidden_size and num_attention_heads",
     "or give the layers as --layers=NxK"),
    (("--model_config={missing}",), "missing.json: No such file or directory",
     "give the path of the model's Hugging Face config.json"),
    (("--model_config={bert}", "--layers=64x64"), "give --layers or --model_config, not both",
     "not both"),
    (("--layers=64x64", "--batch=8:1"), "--batch='8:1'", "give LO:HI"),
    (("--layers=64x64", "--gpus=none"), "--gpus='none'", "give a number of GPUs or 'all'"),
])
def test_bad_flags_refused_in_one_line_before_packing(tmp_path, args, culprit, fix):
    (tmp_path / "bert.json").write_text('{"model_type": "bert"}')
    args = [a.format(bert=tmp_path / "bert.json", missing=tmp_path / "missing.json") for a in args]
    flags, _ = tune_flags.parse(args)
    with pytest.raises(tune_bundle.BundleError) as e:
        tune_bundle.check_flags(flags)
    message = str(e.value)
    assert message.startswith(("--", "give")) and "\n" not in message, message
    assert culprit in message and fix in message, message


def test_model_flags_refused_for_a_library_not_keyed_by_mnk(tmp_path):
    flags, _ = tune_flags.parse(["--layers=64x64"])
    with pytest.raises(UserError, match="the tuning key must be M, N, K .*, not n"):
        tune_flags.check(flags, ("n",))
    assert tune_flags.check(tune_flags.TuneFlags(), ("n",)) is None  # SHAPES: any key
