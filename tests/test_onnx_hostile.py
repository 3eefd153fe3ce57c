"""Hostile ONNX models that pass the file checks but not the play: outputs that are NaN or
infinite (refused at load by the probe run, or in play, one ``OnnxModelError`` naming the file),
tensors kept outside the file by a training graph, and one onnxruntime session per model content
however many agents (or bot games) play it. Built with ``onnx.helper``; no torch needed. Skipped
where onnx or onnxruntime (the ``onnx`` extra) is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra: pip install '.[onnx]'")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra: pip install '.[onnx]'")

from onnx import TensorProto, helper  # noqa: E402

from island_fortress_env.agents import onnx_agent  # noqa: E402
from island_fortress_env.agents.checkpoint_io import space_signature  # noqa: E402
from island_fortress_env.agents.onnx_agent import OnnxModelError  # noqa: E402
from island_fortress_env.cli import app as cli  # noqa: E402
from island_fortress_env.engine.actions import NUM_ACTIONS  # noqa: E402
from island_fortress_env.env.observation import OBS_SIZE  # noqa: E402
from island_fortress_env.players import AgentSpecError, check_agent_spec, make_agent  # noqa: E402


def _const(name: str, value: float) -> object:
    return helper.make_tensor(name, TensorProto.FLOAT, [], [value])


def tiny_model(poison: str = "", training_external: bool = False) -> bytes:
    """A model of the policy's interface (uniform over the legal actions, the value the sum of the
    observation), its outputs poisoned as ``poison`` says:

    * ``nan-log-probs``: every log-probability NaN (the probe run sees it);
    * ``inf-value``: the value 1 / sum(observation), infinite on the probe's blank positions;
    * ``nan-in-play``: log-probabilities plus sqrt(-|sum(observation)|): finite on the probe's
      blank positions, NaN on any other."""
    obs = helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBS_SIZE])
    mask = helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", NUM_ACTIONS])
    logp = helper.make_tensor_value_info("log_probs", TensorProto.FLOAT, ["batch", NUM_ACTIONS])
    value = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    stored = [_const("low", -1e30), _const("zero", 0.0), _const("one", 1.0), _const("minus", -1.0), axes]
    nodes = [
        helper.make_node("Where", ["action_mask", "zero", "low"], ["logits"]),
        helper.make_node("LogSoftmax", ["logits"], ["clean_log_probs"], axis=-1),
        helper.make_node("ReduceSum", ["observation", "axes"], ["total"], keepdims=0),
        helper.make_node("ReduceSum", ["observation", "axes"], ["total_column"], keepdims=1),
    ]
    if poison == "nan-log-probs":
        nodes.append(helper.make_node("Sqrt", ["minus"], ["nan"]))
        nodes.append(helper.make_node("Add", ["clean_log_probs", "nan"], ["log_probs"]))
    elif poison == "nan-in-play":
        nodes.append(helper.make_node("Abs", ["total_column"], ["size"]))
        nodes.append(helper.make_node("Neg", ["size"], ["negative"]))
        nodes.append(helper.make_node("Sqrt", ["negative"], ["maybe_nan"]))
        nodes.append(helper.make_node("Add", ["clean_log_probs", "maybe_nan"], ["log_probs"]))
    else:
        nodes.append(helper.make_node("Identity", ["clean_log_probs"], ["log_probs"]))
    if poison == "inf-value":
        nodes.append(helper.make_node("Div", ["one", "total"], ["value"]))
    else:
        nodes.append(helper.make_node("Identity", ["total"], ["value"]))
    graph = helper.make_graph(nodes, "tiny", [obs, mask], [logp, value], initializer=stored)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if training_external:
        weight = _const("trained", 0.0)
        weight.data_location = TensorProto.EXTERNAL
        entry = weight.external_data.add()
        entry.key, entry.value = "location", "../../etc/passwd"
        init = helper.make_graph(
            [helper.make_node("Identity", ["trained"], ["trained_out"])],
            "init",
            [],
            [helper.make_tensor_value_info("trained_out", TensorProto.FLOAT, [])],
            initializer=[weight],
        )
        model.training_info.add().initialization.CopyFrom(init)
    helper.set_model_props(model, {onnx_agent.META_SIGNATURE: json.dumps(space_signature())})
    return model.SerializeToString()


@pytest.fixture(autouse=True)
def fresh_sessions(monkeypatch):
    """Every test starts with no model session kept."""
    monkeypatch.setattr(onnx_agent, "_shared", type(onnx_agent._shared)())
    monkeypatch.setattr(onnx_agent, "_seen", type(onnx_agent._seen)())


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- outputs checked


@pytest.mark.parametrize(
    ("poison", "words"),
    [("nan-log-probs", "gave NaN log_probs"), ("inf-value", "gave an infinite value")],
)
def test_a_model_of_nan_or_infinite_outputs_is_refused_at_load(tmp_path, capsys, poison, words):
    path = _write(tmp_path, f"{poison}.onnx", tiny_model(poison))
    with pytest.raises(AgentSpecError) as error:
        check_agent_spec(f"sample:{path}")
    message = str(error.value)
    assert words in message and str(path) in message and "\n" not in message
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", f"sample:{path}", "heuristic", "--games", "2", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(err) == 1 and words in err[0] and str(path) in err[0]


@pytest.mark.parametrize("spec", ["onnx:{}", "sample:{}", "threshold:0.1:{}"])
def test_a_model_that_turns_nan_in_play_is_one_error_naming_it(tmp_path, spec):
    path = _write(tmp_path, "late-nan.onnx", tiny_model("nan-in-play"))
    check_agent_spec(spec.format(path))  # the probe's blank positions give finite outputs
    agent = make_agent(spec.format(path), seed=0)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[[3, 7]] = 1
    assert agent.act(np.zeros(OBS_SIZE, np.float32), mask) in (3, 7)
    with pytest.raises(OnnxModelError) as error:
        agent.act(np.ones(OBS_SIZE, np.float32), mask)
    assert "gave NaN log_probs" in str(error.value) and str(path) in str(error.value)
    with pytest.raises(OnnxModelError, match="NaN"):
        agent.probabilities(np.ones((2, OBS_SIZE), np.float32), np.ones((2, NUM_ACTIONS), np.int8))


def test_outputs_of_illegal_actions_are_not_checked(tmp_path):
    """Only the legal actions' log-probabilities must be finite: a mask may make the rest anything."""
    path = _write(tmp_path, "tiny.onnx", tiny_model())
    model, session = onnx_agent.shared_model(path)
    obs, mask = np.zeros((1, OBS_SIZE), np.float32), np.zeros((1, NUM_ACTIONS), bool)
    mask[0, 4] = True

    class Poisoned:
        def run(self, names, feeds):
            log_probs, value = session.run(names, feeds)
            log_probs[~feeds["action_mask"].astype(bool)] = np.nan
            return log_probs, value

    log_probs, _ = onnx_agent._run(Poisoned(), model, obs, mask)
    assert log_probs[0, 4] == pytest.approx(0.0)


def test_a_training_graph_that_keeps_tensors_in_other_files_is_refused(tmp_path):
    path = _write(tmp_path, "trained.onnx", tiny_model(training_external=True))
    with pytest.raises(AgentSpecError) as error:
        check_agent_spec(f"onnx:{path}")
    assert "external data" in str(error.value) and str(path) in str(error.value)


# --------------------------------------------------------------------------- one session per content


@pytest.fixture
def sessions_made(monkeypatch) -> list[int]:
    """Counts onnxruntime sessions made (each construction appends 1)."""
    made: list[int] = []
    real = ort.InferenceSession

    def counted(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", counted)
    return made


def test_the_agents_of_one_model_share_one_session(tmp_path, sessions_made, monkeypatch):
    reads: list[str] = []
    real_read = onnx_agent.read_file
    monkeypatch.setattr(onnx_agent, "read_file", lambda p, limit: reads.append(str(p)) or real_read(p, limit))
    path = _write(tmp_path, "tiny.onnx", tiny_model())
    twin = _write(tmp_path, "twin.onnx", tiny_model())  # the same bytes under another name
    check_agent_spec(f"onnx:{path}")
    agents = [make_agent(f"onnx:{path}", seed=s) for s in range(20)]
    agents += [make_agent(f"sample:{twin}", seed=s) for s in range(5)]
    assert len(sessions_made) == 1
    assert reads == [str(path), str(twin)]  # a file read before, unchanged, is not read again
    assert len({id(a.session) for a in agents}) == 1
    assert {a.path for a in agents} == {str(path), str(twin)}  # errors name each agent's own file
    path.write_bytes(tiny_model("nan-in-play"))  # new content: read, checked and loaded again
    make_agent(f"onnx:{path}", seed=0)
    assert len(sessions_made) == 2 and reads[-1] == str(path)


def test_bot_serve_plays_new_games_of_one_model_on_one_session(tmp_path, sessions_made):
    pytest.importorskip("starlette", reason="bot-serve needs the [web] extra")
    from starlette.testclient import TestClient

    from island_fortress_env.engine.state import Game
    from island_fortress_env.players.remote import decision_request
    from island_fortress_env.web.bots import create_bot_app

    path = _write(tmp_path, "tiny.onnx", tiny_model())
    state = Game(num_players=2).new_initial_state(5)
    with TestClient(create_bot_app(f"sample:{path}")) as client:
        for game in range(30):
            request = decision_request(state, state.current_player(), f"g{game}", 0, game)
            answer = client.post("/", json=request)
            assert answer.status_code == 200 and answer.json()["action"] in state.legal_actions()
        assert len(client.app.state.bot.sessions) == 30
    assert len(sessions_made) == 1
