"""Damaged checkpoint files are refused with one CheckpointError of one line that names the file
and the problem, whichever reader meets them: ``evaluate``, ``play``, ``train --resume`` (native
and SB3), ``CheckpointAgent``; every metadata field the code reads is type-checked."""

from __future__ import annotations

import io
import json
import pickle
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from island_fortress_env.agents.checkpoint import (
    META_MEMBER,
    TRAINING_STATE_MEMBER,
    WEIGHTS_MEMBER,
    CheckpointAgent,
    CheckpointError,
    check_signature,
    load_policy,
    load_training_state,
    read_metadata,
    save_policy,
)
from island_fortress_env.agents.network import ActorCritic

NETWORK = {"cnn_channels": 4, "hidden": 16}


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "good.zip", ActorCritic(**NETWORK), NETWORK, {"num_timesteps": 1})


def _rewrite(src: Path, dst: Path, **replace: bytes) -> Path:
    with zipfile.ZipFile(src) as zin:
        members = {n: zin.read(n) for n in zin.namelist()}
    members.update(replace)
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for name, data in members.items():
            zout.writestr(name, data)
    return dst


def _flip_member_byte(path: Path, member: str) -> None:
    """Damage ``member``'s stored bytes; the zip's directory stays intact."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    data = bytearray(path.read_bytes())
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    for i in range(start + info.compress_size // 3, start + info.compress_size // 3 + 8):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert member in z.namelist()  # still an intact zip


def test_a_good_checkpoint_loads(good):
    net, meta = load_policy(good)
    assert meta["num_timesteps"] == 1 and net.torso.features_dim == 32


def test_agents_of_an_unchanged_checkpoint_share_one_load_and_a_changed_file_is_read_again(
    good, tmp_path, monkeypatch
):
    """A server makes an agent for every new game: a file is loaded and checked once per content,
    each agent drawing from its own generator; a file written again is loaded again, and a
    damaged one is refused as ever."""
    from island_fortress_env.agents import checkpoint

    loads = []
    real = checkpoint.load_policy
    monkeypatch.setattr(checkpoint, "load_policy", lambda path: loads.append(path) or real(path))
    a, b = CheckpointAgent(good, seed=1), CheckpointAgent(good, seed=2)
    assert len(loads) == 1 and a.net is b.net
    a.metadata["num_timesteps"] = 99  # an agent's metadata is its own
    assert b.metadata["num_timesteps"] == 1 and a.rng is not b.rng

    save_policy(good, ActorCritic(**NETWORK), NETWORK, {"num_timesteps": 2})  # a new file, renamed in
    c = CheckpointAgent(good)
    assert len(loads) == 2 and c.net is not a.net and c.metadata["num_timesteps"] == 2

    monkeypatch.setattr(checkpoint, "SHARED_MAX_BYTES", 10)  # a file over it is never hashed whole
    for _ in range(2):
        CheckpointAgent(good)
    assert len(loads) == 4

    _flip_member_byte(good, WEIGHTS_MEMBER)
    with pytest.raises(CheckpointError, match="corrupted"):
        CheckpointAgent(good)


def test_metadata_that_is_not_json_is_refused(good, tmp_path):
    bad = _rewrite(good, tmp_path / "notjson.zip", **{META_MEMBER: b"{not json"})
    with pytest.raises(CheckpointError, match=r"notjson\.zip.*not valid JSON"):
        CheckpointAgent(bad)


def test_metadata_that_is_a_list_is_refused(good, tmp_path):
    bad = _rewrite(good, tmp_path / "list.zip", **{META_MEMBER: json.dumps([1, 2]).encode()})
    with pytest.raises(CheckpointError, match=r"list\.zip.*JSON object, not a list"):
        read_metadata(bad)


@pytest.mark.parametrize("member", [WEIGHTS_MEMBER, META_MEMBER])
def test_a_corrupted_member_inside_an_intact_zip_is_refused(good, member):
    _flip_member_byte(good, member)
    with pytest.raises(CheckpointError, match=rf"good\.zip.*{member.replace('.', '[.]')}.*corrupted"):
        CheckpointAgent(good)


def test_weights_that_do_not_fit_the_network_are_refused(good, tmp_path):
    other = save_policy(
        tmp_path / "other.zip", ActorCritic(cnn_channels=8, hidden=16), {"cnn_channels": 8, "hidden": 16}, {}
    )
    with zipfile.ZipFile(other) as z:
        weights = z.read(WEIGHTS_MEMBER)
    bad = _rewrite(good, tmp_path / "mixed.zip", **{WEIGHTS_MEMBER: weights})
    with pytest.raises(CheckpointError, match=r"mixed\.zip.*weights cannot be loaded"):
        load_policy(bad)


# --------------------------------------------------------------------------- every field, every reader

ROOT = Path(__file__).resolve().parents[1]
SB3_BASELINE = ROOT / "checkpoints" / "baseline-3p.zip"


def _with_meta(src: Path, dst: Path, **changes) -> Path:
    with zipfile.ZipFile(src) as z:
        meta = json.loads(z.read(META_MEMBER))
    for key, value in changes.items():
        if value is _DROP:
            meta.pop(key)
        else:
            meta[key] = value
    return _rewrite(src, dst, **{META_MEMBER: json.dumps(meta).encode()})


_DROP = object()

BAD_METADATA = [
    (
        {"space_signature": "island_fortress_v0"},
        r"space_signature must be an object, not 'island_fortress_v0'",
    ),
    ({"space_signature": {"num_actions": "380"}}, r"space_signature\.num_actions must be an integer >= 0"),
    ({"num_timesteps": "many"}, r"num_timesteps must be an integer >= 0, not 'many'"),
    ({"updates": -1}, r"updates must be an integer >= 0, not -1"),
    ({"elapsed_seconds": "1h"}, r"elapsed_seconds must be a number >= 0"),
    ({"selection": {"score": "high"}}, r"selection\.score must be a number, not 'high'"),
    ({"network": [4, 16]}, r"network must be an object of network settings"),
    ({"network": {"cnn_channels": "4", "hidden": 16}}, r"network\.cnn_channels must be an integer >= 0"),
    (
        {"network": {"cnn_channels": 4, "hidden": 16, "depth": 3}},
        r"network has unknown setting\(s\) \['depth'\]",
    ),
    ({"format": 7}, r"format must be a text, not 7"),
]


@pytest.mark.parametrize("changes,pattern", BAD_METADATA, ids=[p for _c, p in BAD_METADATA])
def test_every_metadata_field_the_code_reads_is_type_checked(good, tmp_path, changes, pattern):
    bad = _with_meta(good, tmp_path / "bad.zip", **changes)
    with pytest.raises(CheckpointError, match=rf"bad\.zip.*{pattern}"):
        read_metadata(bad)
    with pytest.raises(CheckpointError, match=rf"bad\.zip.*{pattern}"):
        CheckpointAgent(bad)


def test_network_settings_that_do_not_fit_the_weights_are_refused_without_building_them(good, tmp_path):
    """A network of 10**9 hidden units is never allocated: shapes are compared first."""
    bad = _with_meta(good, tmp_path / "huge.zip", network={"cnn_channels": 4, "hidden": 10**9})
    with pytest.raises(CheckpointError, match=r"huge\.zip.*weights cannot be loaded.*other parameters"):
        load_policy(bad)


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and len(text) < 400, text
    assert "Please file an issue" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize("member", [WEIGHTS_MEMBER, TRAINING_STATE_MEMBER])
@pytest.mark.parametrize("payload", [b"garbage" * 50, pickle.dumps({"x": object}), b"PK\x03\x04" + b"x" * 60])
def test_garbage_tensor_members_are_one_line(good, tmp_path, member, payload):
    trained = save_policy(
        tmp_path / "t.zip",
        ActorCritic(**NETWORK),
        NETWORK,
        {},
        training_state={"optimizer": _optimizer_state()},
    )
    bad = _rewrite(trained, tmp_path / "bad.zip", **{member: payload})
    with pytest.raises(CheckpointError) as exc:
        check_signature(bad, read_metadata(bad))
    assert re.search(rf"bad\.zip.*{member.replace('.', '[.]')} is not a PyTorch tensor file", _one_line(exc))
    load = load_policy if member == WEIGHTS_MEMBER else load_training_state
    with pytest.raises(CheckpointError) as exc:
        load(bad)
    _one_line(exc)


def _optimizer_state() -> dict:
    import torch

    net = ActorCritic(**NETWORK)
    return torch.optim.Adam(net.parameters()).state_dict()


@pytest.mark.parametrize("state", [{"optimizer": 3}, {"optim": {}}, [1, 2], {"optimizer": {"state": {}}}])
def test_a_training_state_without_an_optimizer_state_is_refused(tmp_path, state):
    path = save_policy(tmp_path / "s.zip", ActorCritic(**NETWORK), NETWORK, {}, training_state=state)
    with pytest.raises(
        CheckpointError, match=r"s\.zip.*training_state\.pt does not hold an optimizer's state"
    ):
        load_training_state(path)
    with pytest.raises(CheckpointError, match="does not hold an optimizer's state"):
        check_signature(path, read_metadata(path))


def test_a_good_training_state_loads(tmp_path):
    path = save_policy(
        tmp_path / "s.zip",
        ActorCritic(**NETWORK),
        NETWORK,
        {},
        training_state={"optimizer": _optimizer_state()},
    )
    assert set(load_training_state(path)["optimizer"]) == {"state", "param_groups"}
    check_signature(path, read_metadata(path))


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_a_truncated_native_checkpoint_is_called_truncated_not_sb3(good, tmp_path, keep):
    data = good.read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CheckpointError) as exc:
        CheckpointAgent(cut)
    assert "truncated" in _one_line(exc) and "SB3" not in str(exc.value)


# --------------------------------------------------------------------------- SB3 checkpoints


def _policy_with_a_wrong_shape() -> bytes:
    """The SB3 baseline's policy.pth, real tensors, its first tensor of another shape."""
    torch = pytest.importorskip("torch")
    with zipfile.ZipFile(SB3_BASELINE) as z:
        weights = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    weights[next(iter(weights))] = torch.zeros(3, 3)
    out = io.BytesIO()
    torch.save(weights, out)
    return out.getvalue()


@pytest.fixture(scope="module")
def sb3_damaged(tmp_path_factory) -> dict[str, Path]:
    """Copies of the shipped SB3 checkpoint: a policy with a tensor of the wrong shape, a garbage
    policy, a flipped byte in the policy, a string space signature."""
    if not SB3_BASELINE.exists():
        pytest.fail("checkpoints/baseline-3p.zip is missing")
    d = tmp_path_factory.mktemp("sb3")
    flipped = d / "flipped.zip"
    shutil.copy(SB3_BASELINE, flipped)
    _flip_member_byte(flipped, "policy.pth")
    return {
        "shape": _rewrite(SB3_BASELINE, d / "shape.zip", **{"policy.pth": _policy_with_a_wrong_shape()}),
        "garbage": _rewrite(SB3_BASELINE, d / "garbage.zip", **{"policy.pth": b"garbage" * 100}),
        "flipped": flipped,
        "signature": _with_meta(SB3_BASELINE, d / "signature.zip", space_signature="v0"),
        "data": _rewrite(SB3_BASELINE, d / "data.zip", data=b"[1, 2]"),
    }


SB3_CASES = {
    "shape": r"cannot be loaded \(Error\(s\) in loading state_dict for .*: size mismatch for",
    "garbage": r"policy\.pth is not a PyTorch tensor file",
    "flipped": r"member policy\.pth is corrupted",
    "signature": r"space_signature must be an object",
    "data": r"data must hold a JSON object",
}


@pytest.mark.parametrize("case", sorted(SB3_CASES))
def test_damaged_sb3_checkpoints_are_one_checkpoint_error(sb3_damaged, case):
    pytest.importorskip("sb3_contrib", reason="SB3 checkpoints need the [train] extra")
    with pytest.raises(CheckpointError) as exc:
        CheckpointAgent(sb3_damaged[case])
    assert re.search(SB3_CASES[case], _one_line(exc))


def _cli(argv: list[str], capsys) -> tuple[int, str]:
    from island_fortress_env.cli import app as cli

    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(SB3_CASES))
def test_train_sb3_resume_refuses_a_damaged_checkpoint_in_one_line(sb3_damaged, case, tmp_path, capsys):
    pytest.importorskip("sb3_contrib", reason="the SB3 trainer needs the [train] extra")
    small = ["train.n_envs=1", "train.vec_env=dummy"]
    logs = [f"logging.runs_dir={tmp_path}/runs", f"logging.checkpoints_dir={tmp_path}/ckpt"]
    code, err = _cli(["train", "--backend", "sb3", "--resume", str(sb3_damaged[case]), *small, *logs], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(SB3_CASES[case], err), err
    assert not (tmp_path / "ckpt").exists()


@pytest.mark.parametrize("command", ["evaluate", "play"])
@pytest.mark.parametrize("case", ["garbage", "signature"])
def test_evaluate_and_play_refuse_a_damaged_checkpoint_in_one_line(sb3_damaged, command, case, capsys):
    argv = (
        ["evaluate", str(sb3_damaged[case]), "random", "--games", "1"]
        if command == "evaluate"
        else ["play", "--agents", str(sb3_damaged[case]), "--seed", "1"]
    )
    code, err = _cli(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(SB3_CASES[case], err), err


@pytest.mark.parametrize(
    "changes,pattern",
    [
        ({"space_signature": "v0"}, "space_signature must be an object"),
        ({"num_timesteps": "many"}, "num_timesteps must be an integer"),
        ({"updates": 1.5}, "updates must be an integer"),
    ],
)
def test_train_native_resume_refuses_bad_metadata_in_one_line(good, tmp_path, changes, pattern, capsys):
    bad = _with_meta(good, tmp_path / "bad.zip", **changes)
    code, err = _cli(
        ["train", "--resume", str(bad), f"logging.runs_dir={tmp_path}/runs",
         f"logging.checkpoints_dir={tmp_path}/ckpt"],
        capsys,
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(rf"bad\.zip.*{pattern}", err), err


def test_train_native_resume_refuses_garbage_weights_in_one_line(good, tmp_path, capsys):
    bad = _rewrite(good, tmp_path / "bad.zip", **{WEIGHTS_MEMBER: b"garbage" * 50})
    code, err = _cli(["train", "--resume", str(bad), f"logging.runs_dir={tmp_path}/runs"], capsys)
    assert code == 2 and err.count("\n") == 1 and "Please file an issue" not in err, err
    assert "actor_critic.pt is not a PyTorch tensor file" in err
