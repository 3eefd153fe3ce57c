"""Hostile checkpoints: a pickle that would run code (here: make a marker file) in every member of a
checkpoint that could hold one, driven through every route that loads a checkpoint: the agents
(``CheckpointAgent``, ``sample:``, ``search:``, the spec check), ``load_model``, ``initial_weights``,
the commands (``evaluate`` with a checkpoint, ``sample:`` and ``mixture:``, ``demo``, ``play``,
``tournament``, ``train --resume`` with either trainer, ``train policy.init_from=``, ``serve``) and
the web app. The pickle never runs: the marker is never made, and a checkpoint that cannot be read
without its pickle is refused with one ``CheckpointError`` (one line and exit status 2 from a
command) naming the file. A checkpoint whose SB3 settings are rebuilt from their readable fields
loads exactly as ``MaskablePPO.load`` loads it, and the pickles beside those fields are never read."""

from __future__ import annotations

import base64
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from test_checkpoint_files import SB3_BASELINE, _one_line, _rewrite
from tiny_runs import SMALL, run_command

from island_fortress_env.agents.checkpoint import (
    NATIVE_FORMAT,
    SB3_DATA_MEMBER,
    SB3_OPTIMIZER_MEMBER,
    SB3_POLICY_MEMBER,
    SB3_VARIABLES_MEMBER,
    TRAINING_STATE_MEMBER,
    WEIGHTS_MEMBER,
    CheckpointAgent,
    CheckpointError,
    check_signature,
    load_model,
    load_policy,
    load_training_state,
    read_metadata,
    save_policy,
)
from island_fortress_env.agents.network import ActorCritic
from island_fortress_env.players import AgentSpecError, check_agent_spec, make_agent

pytest.importorskip("sb3_contrib", reason="SB3 checkpoints need the [train] extra")

from stable_baselines3.common.save_util import data_to_json

ROOT = Path(__file__).resolve().parents[1]


class Touch:
    """Unpickled, it creates the file ``marker``: a stand-in for any code a pickle can run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def marker(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile") / "the-pickle-ran"


@pytest.fixture(autouse=True)
def no_marker_before(marker):
    marker.unlink(missing_ok=True)


def assert_never_ran(marker: Path) -> None:
    assert not marker.exists(), "a pickle in the checkpoint was unpickled: its code ran"


def sb3_entry(obj: object) -> dict:
    """What ``MaskablePPO.save`` writes into ``data`` for an object JSON cannot hold (SB3's own
    ``data_to_json``): its type, its cloudpickle and its readable fields."""
    return json.loads(data_to_json({"x": obj}))["x"]


def torch_payload(marker: Path) -> bytes:
    """A PyTorch file of real tensors with the hostile object beside them."""
    out = io.BytesIO()
    torch.save({"weight": torch.zeros(2), "hook": Touch(marker)}, out)
    return out.getvalue()


def _data(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read(SB3_DATA_MEMBER))


def pickled_keys(path: Path) -> list[str]:
    return sorted(k for k, v in _data(path).items() if isinstance(v, dict) and ":serialized:" in v)


def with_data(src: Path, dst: Path, change) -> Path:
    data = _data(src)
    change(data)
    return _rewrite(src, dst, **{SB3_DATA_MEMBER: json.dumps(data).encode()})


SB3_KEYS = pickled_keys(SB3_BASELINE)  # the 11 settings SB3 pickles in a MaskablePPO checkpoint
SB3_MEMBERS = (SB3_POLICY_MEMBER, SB3_OPTIMIZER_MEMBER, SB3_VARIABLES_MEMBER)
NATIVE_MEMBERS = (WEIGHTS_MEMBER, TRAINING_STATE_MEMBER)


def swap_pickles(src: Path, dst: Path, marker: Path) -> Path:
    """Every pickled setting's pickle replaced by the hostile one, its readable fields kept."""
    hostile = sb3_entry(Touch(marker))[":serialized:"]

    def change(data: dict) -> None:
        for key in pickled_keys(src):
            data[key][":serialized:"] = hostile

    return with_data(src, dst, change)


def native_checkpoint(path: Path) -> Path:
    """A small native checkpoint with its training state (the optimizer's)."""
    net = ActorCritic(**SMALL)
    state = {"optimizer": torch.optim.Adam(net.parameters()).state_dict()}
    return save_policy(path, net, SMALL, {}, training_state=state)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, marker) -> dict[str, Path]:
    """Hostile checkpoints by case: ``data.KEY`` (SB3's setting KEY replaced by the hostile
    object, as SB3 would save it), ``data.env`` (a hostile setting of a name SB3 load would use as
    the env), and one per tensor member, SB3's and the native trainer's."""
    d = tmp_path_factory.mktemp("files")
    entry = sb3_entry(Touch(marker))
    files: dict[str, Path] = {}
    for key in [*SB3_KEYS, "env"]:

        def change(data: dict, key: str = key) -> None:
            data[key] = entry

        files[f"data.{key}"] = with_data(SB3_BASELINE, d / f"data.{key}.zip", change)
    payload = torch_payload(marker)
    for member in SB3_MEMBERS:
        files[member] = _rewrite(SB3_BASELINE, d / f"{member}.zip", **{member: payload})
    native = native_checkpoint(d / "native.zip")
    for member in NATIVE_MEMBERS:
        files[member] = _rewrite(native, d / f"{member}.zip", **{member: payload})
    return files


def expected_error(case: str) -> str:
    """What the one-line error says for ``case``: the file and the setting or member."""
    what = (
        rf"data: {case[5:]} is a pickled" if case.startswith("data.") else rf"member {re.escape(case)} is not"
    )
    return rf"{re.escape(case)}\.zip'?: .*{what}"


SB3_CASES = [*(f"data.{k}" for k in SB3_KEYS), "data.env", *SB3_MEMBERS]
ALL_CASES = [*SB3_CASES, *NATIVE_MEMBERS]


# --------------------------------------------------------------------------- the payloads are live


def test_the_hostile_pickles_run_their_code_when_unpickled(marker, tmp_path):
    """What the other tests show is never done would make the marker: the payloads are live."""
    import cloudpickle

    cloudpickle.loads(base64.b64decode(sb3_entry(Touch(marker))[":serialized:"]))
    assert marker.exists()
    marker.unlink()
    torch.load(io.BytesIO(torch_payload(marker)), weights_only=False)
    assert marker.exists()


def test_the_shipped_sb3_checkpoint_has_the_pickled_settings_tested_here():
    assert len(SB3_KEYS) == 11 and {"policy_class", "policy_kwargs", "clip_range"} <= set(SB3_KEYS)


# --------------------------------------------------------------------------- the loaders


def _initial_weights(path: Path) -> None:
    """``policy.init_from``: a native checkpoint's weights as they are, an SB3 one's converted."""
    from island_fortress_env.training.weights import initial_weights

    native = read_metadata(path).get("format") == NATIVE_FORMAT
    initial_weights(
        str(path),
        SMALL if native else {**SMALL, "cnn_channels": 32, "hidden": 128, "head_activation": "tanh"},
    )


# Every loader, and whether it reads a native checkpoint's training state (playing and starting a
# run from a checkpoint need its weights only).
LOADERS = {
    "CheckpointAgent": (lambda p: CheckpointAgent(p), False),
    "sample agent": (lambda p: make_agent(f"sample:{p}"), False),
    "spec check": (lambda p: check_agent_spec(str(p)), True),
    "check_signature": (lambda p: check_signature(p, read_metadata(p)), True),
    "initial_weights": (_initial_weights, False),
}


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize("case", ALL_CASES)
def test_every_loader_refuses_every_hostile_checkpoint_without_unpickling(hostile, marker, case, loader):
    load, reads_training_state = LOADERS[loader]
    if case == TRAINING_STATE_MEMBER and not reads_training_state:
        load(hostile[case])  # the weights are fine and the training state is not read
        assert_never_ran(marker)
        return
    with pytest.raises((CheckpointError, AgentSpecError)) as exc:
        load(hostile[case])
    assert_never_ran(marker)
    assert re.search(expected_error(case), _one_line(exc)), exc.value


@pytest.mark.parametrize("case", SB3_CASES)
def test_load_model_refuses_every_hostile_sb3_checkpoint(hostile, marker, case):
    with pytest.raises(CheckpointError) as exc:
        load_model(hostile[case])
    assert_never_ran(marker)
    assert re.search(expected_error(case), _one_line(exc))


NATIVE_LOADERS = {  # and the member each reads
    "load_policy": (load_policy, WEIGHTS_MEMBER),
    "load_training_state": (load_training_state, TRAINING_STATE_MEMBER),
    "search agent": (lambda p: make_agent(f"search:{p}:2"), WEIGHTS_MEMBER),
}


@pytest.mark.parametrize("loader", sorted(NATIVE_LOADERS))
def test_native_loaders_refuse_a_hostile_member(hostile, marker, loader):
    load, member = NATIVE_LOADERS[loader]
    with pytest.raises(CheckpointError) as exc:
        load(hostile[member])
    assert_never_ran(marker)
    assert re.search(expected_error(member), _one_line(exc))


# --------------------------------------------------------------------------- the commands

# The files a command is tried with: a pickled setting, a setting SB3 would take the env from, and
# a tensor member of each kind.
COMMAND_CASES = ["data.policy_kwargs", "data.env", "data._last_obs", SB3_POLICY_MEMBER, *NATIVE_MEMBERS]


def _mixture(path: Path, checkpoint: Path) -> str:
    path.write_text(json.dumps({"mixture": {str(checkpoint): 1.0}}), "utf-8")
    return f"mixture:{path}"


def _dirs(tmp_path: Path) -> list[str]:
    return [f"logging.runs_dir={tmp_path}/runs", f"logging.checkpoints_dir={tmp_path}/ckpt"]


GAME = ["random", "--games", "1", "--no-progress"]
SB3_TRAIN = ["train", "--backend", "sb3"]
TINY_SB3 = ["--no-eval", "train.n_envs=1", "train.vec_env=dummy", "train.total_timesteps=64"]
# A native run of one short rollout, should a checkpoint be (wrongly) accepted.
NATIVE_BUDGET = [
    "--no-eval", "pretrain.games=0", "train.total_decisions=300", "train.rollout_decisions=300",
    "ppo.minibatch_size=100", "train.workers=0", "train.pipelined=false", "eval.every=0",
]  # fmt: skip
SMALL_NATIVE = [*NATIVE_BUDGET, "policy.cnn_channels=2", "policy.hidden=8"]
TANH_NATIVE = [*NATIVE_BUDGET, "policy.head_activation=tanh"]


def _sb3_config() -> str:
    return str(ROOT / "configs" / "sb3.yaml")


# Each command with a checkpoint file f, writing under the folder t.
COMMANDS = {
    "evaluate": lambda f, t: ["evaluate", str(f), *GAME],
    "evaluate sample:": lambda f, t: ["evaluate", f"sample:{f}", *GAME],
    "evaluate mixture:": lambda f, t: ["evaluate", _mixture(t / "mix.json", f), *GAME],
    "demo": lambda f, t: ["demo", "--players", "2", "--agents", str(f), "random"],
    "play": lambda f, t: ["play", "--agents", str(f), "--seed", "1"],
    "tournament": lambda f, t: ["tournament", str(f), "random", "--games", "2", "--no-progress"],
    "serve": lambda f, t: ["serve", "--agents", str(f), "random", "--no-browser", "--games", str(t / "g")],
    "train sb3 --resume": lambda f, t: [*SB3_TRAIN, "--resume", str(f), *TINY_SB3, *_dirs(t)],
    "train --resume": lambda f, t: ["train", "--resume", str(f), *SMALL_NATIVE, *_dirs(t)],
    "train policy.init_from": lambda f, t: ["train", *TANH_NATIVE, f"policy.init_from={f}", *_dirs(t)],
}


@pytest.fixture
def no_server(monkeypatch):
    """``serve`` builds its app but never listens: a checkpoint it accepted would not hang the test."""
    uvicorn = pytest.importorskip("uvicorn", reason="serve needs the [web] extra")
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, *args, **kwargs: None)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", COMMAND_CASES)
def test_every_command_refuses_a_hostile_checkpoint_in_one_line(
    hostile, marker, case, command, tmp_path, capsys, no_server
):
    if command == "train sb3 --resume" and case in NATIVE_MEMBERS:
        pytest.skip("the SB3 trainer resumes SB3 checkpoints")
    if command == "train --resume" and case not in NATIVE_MEMBERS:
        pytest.skip("the native trainer resumes native checkpoints")
    if command == "train policy.init_from" and case == TRAINING_STATE_MEMBER:
        pytest.skip("a run started from a checkpoint reads its weights only")
    if command == "serve":
        pytest.importorskip("starlette", reason="serve needs the [web] extra")
    code, _out, err = run_command(COMMANDS[command](hostile[case], tmp_path), capsys)
    assert_never_ran(marker)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(expected_error(case), err), err
    assert not (tmp_path / "ckpt").exists()


def test_the_web_app_refuses_a_hostile_checkpoint(hostile, marker, tmp_path):
    pytest.importorskip("starlette", reason="the web app needs the [web] extra")
    from island_fortress_env.web import create_app

    for case in COMMAND_CASES:
        with pytest.raises((CheckpointError, AgentSpecError)) as exc:
            create_app([str(hostile[case]), "random"], tmp_path / "games")
        assert re.search(expected_error(case), _one_line(exc))
    assert_never_ran(marker)


# --------------------------------------------------------------------------- the pickles are never read


@pytest.fixture(scope="module")
def swapped(tmp_path_factory, marker) -> Path:
    """The shipped SB3 checkpoint with every pickle replaced by the hostile one, the readable
    fields beside them kept: everything is rebuilt from those, so it loads."""
    return swap_pickles(SB3_BASELINE, tmp_path_factory.mktemp("swapped") / "swapped.zip", marker)


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


# What the rebuilt model does not take from the file: what SB3 makes again before training (the
# last observations, the episode statistics) and the buffer made from the settings. (Classes and
# schedules, which are callable, are compared by what they make.)
NOT_COMPARED = {"_last_obs", "_last_episode_starts", "ep_info_buffer", "ep_success_buffer", "rollout_buffer"}


def _kwargs(model) -> dict:
    """The policy's arguments, the features extractor by its name: the shipped file names it by
    the module name it had where it was trained (``training.policy``)."""
    kwargs = dict(model.policy_kwargs)
    kwargs["features_extractor_class"] = kwargs["features_extractor_class"].__name__
    return kwargs


def test_the_rebuilt_model_is_the_one_that_sb3_load_makes(swapped, marker):
    """``load_model`` on the shipped checkpoint (and on its copy with hostile pickles) makes the
    model that ``MaskablePPO.load`` makes of the shipped file: the same weights, optimizer state,
    settings and action probabilities."""
    from sb3_contrib import MaskablePPO

    reference = MaskablePPO.load(str(SB3_BASELINE), device="cpu")  # the trusted shipped file
    obs = torch.as_tensor(np.random.default_rng(0).uniform(-1, 3, (4, reference.observation_space.shape[0])))
    mask = np.ones((4, reference.action_space.n), bool)
    mask[:, ::3] = False
    expected = reference.policy.get_distribution(obs.float(), action_masks=mask).distribution.probs
    for path in (SB3_BASELINE, swapped):
        model, _meta = load_model(path)
        assert_never_ran(marker)
        assert _same(model.policy.state_dict(), reference.policy.state_dict())
        assert _same(model.policy.optimizer.state_dict(), reference.policy.optimizer.state_dict())
        for key, value in vars(reference).items():
            if key not in NOT_COMPARED and key != "policy_kwargs" and not callable(value):
                assert _same(getattr(model, key), value), key
        assert _kwargs(model) == _kwargs(reference)
        assert type(model.rollout_buffer) is type(reference.rollout_buffer)
        assert model.clip_range(1.0) == reference.clip_range(1.0) == 0.2
        assert model.lr_schedule(0.5) == reference.lr_schedule(0.5)
        assert repr(model.policy) == repr(reference.policy)
        probs = model.policy.get_distribution(obs.float(), action_masks=mask).distribution.probs
        assert torch.equal(probs, expected)


def test_hostile_pickles_beside_readable_settings_are_never_read(swapped, marker, tmp_path, capsys):
    """The copy plays exactly as the shipped checkpoint through ``evaluate``, ``sample:``,
    ``mixture:``, ``demo`` and the web app."""
    from island_fortress_env.training.evaluate import evaluate

    for spec in ("{}", "sample:{}"):
        results = [
            evaluate([spec.format(path), "random"], games=2, seed=4)["agents"]
            for path in (SB3_BASELINE, swapped)
        ]
        assert_never_ran(marker)
        assert [(a["wins"], a["mean_score"]) for a in results[0]] == [
            (a["wins"], a["mean_score"]) for a in results[1]
        ]
    for argv in (
        ["evaluate", _mixture(tmp_path / "mix.json", swapped), "random", "--games", "1", "--no-progress"],
        ["demo", "--players", "2", "--agents", str(swapped), "random"],
    ):
        code, _out, err = run_command(argv, capsys)
        assert code == 0, err
        assert_never_ran(marker)
    pytest.importorskip("starlette", reason="the web app needs the [web] extra")
    from tests.web_client import client_for

    with client_for(tmp_path / "games", agents=(str(swapped), "random")) as client:
        body = {"players": 2, "seat": 1, "opponents": [str(swapped)], "seed": 3}
        response = client.post("/api/play", json=body)
        assert response.status_code == 201, response.text
    assert_never_ran(marker)


def test_train_sb3_resumes_a_checkpoint_with_hostile_pickles_without_reading_them(
    swapped, marker, tmp_path, tmp_path_factory, capsys
):
    """A run resumed from a checkpoint the trainer wrote, its pickles made hostile, trains on and
    continues the step count; the pickles are never read."""
    from test_training import tiny_config

    from island_fortress_env.training.train import train

    first = train(tiny_config(tmp_path / "first", "tiny", "train.total_timesteps=64"))
    copy = swap_pickles(first, tmp_path / "hostile-tiny.zip", marker)
    assert pickled_keys(copy) == SB3_KEYS
    argv = [*SB3_TRAIN, "--config", _sb3_config(), "--resume", str(copy), *TINY_SB3]
    code, _out, err = run_command([*argv, *_dirs(tmp_path / "second"), "run_name=resumed"], capsys)
    assert_never_ran(marker)
    assert code == 0, err
    resumed = tmp_path / "second" / "ckpt" / "resumed" / "final.zip"
    assert read_metadata(resumed)["num_timesteps"] >= read_metadata(first)["num_timesteps"] + 64


def _set(key: str, field: str, value: object):
    def change(data: dict) -> None:
        data[key][field] = value

    return change


# A readable field that does not describe what this loader rebuilds: refused, never guessed.
READABLE_CHANGES = {
    "extractor": (
        _set("policy_kwargs", "features_extractor_class", "<class 'os.system'>"),
        r"data: policy_kwargs\.features_extractor_class is \"<class 'os\.system'>\", not one of",
    ),
    "policy argument": (
        _set("policy_kwargs", "activation_fn", "<class 'torch.nn.modules.activation.ReLU'>"),
        r"data: policy_kwargs\.activation_fn: a policy argument this loader does not rebuild",
    ),
    "policy class": (
        _set("policy_class", "__init__", "<function MaskableActorCriticCnnPolicy.__init__ at 0x1>"),
        r"data: policy_class is not sb3_contrib\.common\.maskable\.policies\.MaskableActorCriticPolicy",
    ),
    "actions": (_set("action_space", "n", "381"), r"data: action_space is not Discrete\(380\)"),
    "observations": (
        _set("observation_space", "_shape", [5]),
        r"data: observation_space is not a float32 Box",
    ),
    "schedule": (
        _set("clip_range", "value_schedule", "<function <lambda> at 0x1>"),
        r"data: clip_range is a schedule other than a constant or a linear one",
    ),
}


@pytest.mark.parametrize("change", sorted(READABLE_CHANGES))
def test_a_setting_whose_readable_fields_describe_something_else_is_refused(change, tmp_path):
    edit, pattern = READABLE_CHANGES[change]
    bad = with_data(SB3_BASELINE, tmp_path / "bad.zip", edit)
    with pytest.raises(CheckpointError) as exc:
        CheckpointAgent(bad)
    assert re.search(rf"bad\.zip'?: {pattern}", _one_line(exc)), exc.value


def test_a_linear_schedule_is_rebuilt_from_its_readable_form(tmp_path):
    linear = "LinearSchedule(start=0.3, end=0.1, end_fraction=1.0)"
    path = with_data(SB3_BASELINE, tmp_path / "linear.zip", _set("clip_range", "value_schedule", linear))
    model, _meta = load_model(path)
    assert model.clip_range(1.0) == pytest.approx(0.3) and model.clip_range(0.0) == pytest.approx(0.1)
