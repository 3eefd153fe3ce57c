"""The typed training configs (pydantic models): one error of one line naming the file and the
key, strict types, unknown keys refused, help with every field; and checkpoint metadata checked by
the same means."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from island_fortress_env.agents.checkpoint import META_MEMBER, CheckpointError, read_metadata
from island_fortress_env.cli.app import main as cli_main
from island_fortress_env.training.config import (
    MAX_CONFIG_BYTES,
    NativeConfig,
    RLlibConfig,
    TrainConfig,
    TrainConfigError,
    load_config,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = [NativeConfig, TrainConfig, RLlibConfig]
SHIPPED_POLICY = ROOT / "checkpoints" / "policy-2-4p.zip"


def _leaf_fields(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _leaf_fields(annotation, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", field


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: s.__name__)
def test_every_field_has_its_help_with_it(schema):
    missing = [key for key, field in _leaf_fields(schema) if not field.description]
    assert not missing


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.workers=2.0", r"train\.workers: expected int, got 2\.0$"),
        ("train.pipelined=maybe", r"train\.pipelined: expected bool, got 'maybe'$"),
        ("logging.runs_dir=3", r"logging\.runs_dir: expected str, got 3$"),
        ("train.update_dtype=float16", r"train\.update_dtype: must be 'auto', 'float32' or 'bfloat16', not"),
        ("train.core_threads=0", r"train\.core_threads: must be >= 1, not 0$"),
        ("league.share=1.5", r"league\.share: must be <= 1, not 1\.5$"),
        ("ppo.learning_rate=0", r"ppo\.learning_rate: must be > 0, not 0$"),
        ("ppo.nsteps=3", r"ppo\.nsteps: unknown key; known: \['anneal_lr', "),
        ("tables=3", r"tables: expected a section \(a mapping of keys\), got 3$"),
        ("pretrain.tables={five: 1}", r"pretrain\.tables: unknown key 'five'; use 'two', 'three' or 'four'$"),
        ("league.members=[3]", r"league\.members\[0\]: expected str, got 3$"),
        ("league.members=['']", r"league\.members\[0\]: must not be empty$"),
        ("env.options={bogus: 1}", r"env\.options: .*bogus"),
        # regularised self-play (training/regularise.py)
        ("ppo.magnet_coef=-0.1", r"ppo\.magnet_coef: must be >= 0, not -0\.1$"),
        ("ppo.prev_kl_coef=-1", r"ppo\.prev_kl_coef: must be >= 0, not -1$"),
        ("ppo.magnet_ema=0", r"ppo\.magnet_ema: must be > 0, not 0$"),
        ("ppo.magnet_ema=1", r"ppo\.magnet_ema: must be < 1, not 1$"),
        ("ppo.magnet_ema=1.5", r"ppo\.magnet_ema: must be < 1, not 1\.5$"),
        ("ppo.magnet=kalman", r"ppo\.magnet: must be 'reset' or 'ema', not 'kalman'$"),
        ("ppo.magnet_every=0", r"ppo\.magnet_every: must be >= 1, not 0$"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_key(override, message):
    with pytest.raises(TrainConfigError, match=rf"^config 'defaults': {message}") as caught:
        load_config(None, [override], schema=NativeConfig)
    assert "\n" not in str(caught.value)


def test_several_problems_name_the_first_and_count_the_rest():
    with pytest.raises(
        TrainConfigError, match=r"^config 'defaults': seed: must be >= 0, not -1 \(and 1 more\)$"
    ):
        load_config(None, ["seed=-1", "ppo.gamma=0"], schema=NativeConfig)


def test_the_sb3_and_rllib_choices_are_checked():
    with pytest.raises(TrainConfigError, match=r"train\.vec_env: must be 'subproc' or 'dummy', not 'fork'$"):
        load_config(None, ["train.vec_env=fork"], schema=TrainConfig)
    with pytest.raises(
        TrainConfigError, match=r"env\.reward: must be 'win_loss', 'score_margin' or 'vp_delta'"
    ):
        load_config(None, ["env.reward=points"], schema=RLlibConfig)
    with pytest.raises(TrainConfigError, match=r"env\.num_players: must be <= 4, not 5$"):
        load_config(None, ["env.num_players=5"], schema=RLlibConfig)


def test_numbers_are_read_as_yaml_writes_them():
    cfg = load_config(
        None, ["ppo.learning_rate=1e-4", "train.max_minutes=2", "tables.two=3"], schema=NativeConfig
    )
    assert cfg.ppo.learning_rate == 1e-4 and cfg.train.max_minutes == 2.0 and cfg.tables.two == 3.0
    assert isinstance(cfg.train.max_minutes, float)


def test_an_assignment_is_checked_like_a_file():
    cfg = load_config(None, [], schema=NativeConfig)
    with pytest.raises(ValueError, match="update_dtype"):
        cfg.train.update_dtype = "float16"


def test_a_file_names_itself_and_the_key(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("ppo:\n  gamma: 0.99\n  gama: 0.9\n")
    with pytest.raises(TrainConfigError, match=r"^config '.*run\.yaml': ppo\.gama: unknown key"):
        load_config(path, schema=NativeConfig)
    path.write_text("- a list\n")
    with pytest.raises(TrainConfigError, match=r"run\.yaml': must be a mapping at the top level$"):
        load_config(path, schema=NativeConfig)
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(TrainConfigError, match=r"run\.yaml': not a text \(YAML\) file$"):
        load_config(path, schema=NativeConfig)
    path.write_text("#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(TrainConfigError, match=r"run\.yaml': larger than \d+ bytes$"):
        load_config(path, schema=NativeConfig)


@pytest.mark.parametrize("override", ["ppo.gamma=[0.9", "=1", "ppo..gamma=1", "ppo.gamma"])
def test_a_malformed_override_is_one_error(override):
    with pytest.raises(TrainConfigError, match=r"^override '"):
        load_config(None, [override], schema=NativeConfig)


def test_the_cli_refuses_a_bad_key_in_one_line_before_any_work(tmp_path, capsys):
    runs = tmp_path / "runs"
    argv = [
        "train",
        "--config",
        str(ROOT / "configs" / "default.yaml"),
        f"logging.runs_dir={runs}",
        "ppo.gamma=1.5",
    ]
    with pytest.raises(SystemExit) as exited:
        cli_main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "default.yaml': ppo.gamma: must be <= 1, not 1.5" in err
    assert not runs.exists()


# ---------------------------------------------------------------- checkpoint metadata


def _with_metadata(tmp_path: Path, change: dict) -> Path:
    with zipfile.ZipFile(SHIPPED_POLICY) as z:
        members = {name: z.read(name) for name in z.namelist()}
    meta = {**json.loads(members[META_MEMBER]), **change}
    members[META_MEMBER] = json.dumps(meta).encode()
    path = tmp_path / "changed.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_the_shipped_policy_metadata_passes_the_model():
    meta = read_metadata(SHIPPED_POLICY)
    assert meta["network"]["hidden"] > 0 and meta["space_signature"]["num_actions"] > 0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_timesteps": None}, r"num_timesteps must be an integer >= 0, not None"),
        ({"num_timesteps": True}, r"num_timesteps must be an integer >= 0, not True"),
        ({"training_seconds": float("inf")}, r"training_seconds must be a number >= 0, not inf"),
        ({"run_name": ["x"]}, r"run_name must be a text, not \['x'\]"),
        ({"env_options": []}, r"env_options must be an object, not \[\]"),
        ({"selection": {"games": -2}}, r"selection\.games must be an integer >= 0, not -2"),
    ],
)
def test_bad_metadata_is_one_error_naming_the_file_and_the_field(tmp_path, change, message):
    path = _with_metadata(tmp_path, change)
    with pytest.raises(CheckpointError, match=rf"^checkpoint '.*changed\.zip': {META_MEMBER}: {message}$"):
        read_metadata(path)


def test_metadata_fields_the_code_does_not_read_are_kept(tmp_path):
    path = _with_metadata(tmp_path, {"notes": {"anything": [1, 2]}, "selection": {"score": 1, "extra": "x"}})
    meta = read_metadata(path)
    assert meta["notes"] == {"anything": [1, 2]} and meta["selection"]["extra"] == "x"
