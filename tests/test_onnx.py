"""ONNX: ``island-fortress export`` and the ``onnx:FILE`` agent. The exported shipped policy
plays the checkpoint's greedy actions on 1,000 positions and the same ``evaluate`` games; every
command plays it without importing torch; bad files are one error before any game; the export's
user errors are one line and exit status 2. Skipped where onnx, onnxruntime or onnxscript (the
``onnx`` extra) or torch is not installed (tests/integrations/test_onnx.py plays without torch)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra: pip install '.[onnx]'")
pytest.importorskip("onnxruntime", reason="the onnx extra: pip install '.[onnx]'")
pytest.importorskip("onnxscript", reason="the onnx extra (torch's exporter needs onnxscript)")
pytest.importorskip("torch", reason="export and the comparisons need torch (the train extra)")

from onnx import TensorProto, helper  # noqa: E402

from island_fortress_env.agents import onnx_agent  # noqa: E402
from island_fortress_env.agents.checkpoint import CheckpointAgent, space_signature  # noqa: E402
from island_fortress_env.agents.onnx_agent import OnnxAgent  # noqa: E402
from island_fortress_env.agents.onnx_export import export_onnx  # noqa: E402
from island_fortress_env.cli import app as cli  # noqa: E402
from island_fortress_env.engine.actions import NUM_ACTIONS  # noqa: E402
from island_fortress_env.env.observation import OBS_SIZE  # noqa: E402
from island_fortress_env.env.records import load  # noqa: E402
from island_fortress_env.players import AgentKind, AgentSpecError, check_agent_spec, make_agent  # noqa: E402
from island_fortress_env.players.positions import sample_positions  # noqa: E402
from island_fortress_env.players.search import SearchAgent  # noqa: E402
from island_fortress_env.players.search_reference import ReferenceSearchAgent  # noqa: E402
from island_fortress_env.players.specs import GREEDY, SAMPLED, PlayMode, parse_agent_spec  # noqa: E402
from island_fortress_env.training.evaluate import evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "policy-2-4p.zip"
SB3 = ROOT / "checkpoints" / "baseline-3p.zip"

pytestmark = pytest.mark.skipif(
    not SHIPPED.is_file(), reason="the shipped checkpoint is not in this checkout"
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("onnx") / "policy-2-4p.onnx"
    report = export_onnx(SHIPPED, out, positions=sample_positions(64))
    assert report.path == out and report.same_greedy == 64 and report.log_prob_error < 1e-4
    return out


# --------------------------------------------------------------------------- the model


def test_the_export_is_a_checked_model_with_a_dynamic_batch(exported):
    model = onnx.load(exported)
    onnx.checker.check_model(model, full_check=True)
    shapes = {
        v.name: (
            v.type.tensor_type.elem_type,
            [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim],
        )
        for v in [*model.graph.input, *model.graph.output]
    }
    assert shapes == {
        "observation": (TensorProto.FLOAT, ["batch", OBS_SIZE]),
        "action_mask": (TensorProto.BOOL, ["batch", NUM_ACTIONS]),
        "log_probs": (TensorProto.FLOAT, ["batch", NUM_ACTIONS]),
        "value": (TensorProto.FLOAT, ["batch"]),
    }
    meta = {p.key: p.value for p in model.metadata_props}
    assert json.loads(meta[onnx_agent.META_SIGNATURE]) == space_signature()
    assert meta[onnx_agent.META_CHECKPOINT] == "policy-2-4p.zip"
    assert "mask" in model.graph.doc_string


def test_the_same_greedy_actions_as_the_checkpoint_on_1000_positions(exported):
    obs, masks = sample_positions(1000, seed=100)  # the runner's games, random and heuristic
    torch_agent, exported_agent = CheckpointAgent(SHIPPED), OnnxAgent(exported)
    want, got = torch_agent.probabilities(obs, masks), exported_agent.probabilities(obs, masks)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert np.all(got[masks == 0] == 0)
    legal = masks.astype(bool)
    greedy = np.argmax(np.where(legal, want, -1.0), 1)
    assert np.array_equal(np.argmax(np.where(legal, got, -1.0), 1), greedy)
    for k in range(0, 1000, 50):  # one position at a time, as a single game plays it
        assert exported_agent.act(obs[k], masks[k]) == torch_agent.act(obs[k], masks[k]) == greedy[k]


def test_evaluate_plays_the_same_games_as_the_checkpoint(exported, tmp_path):
    runs = {}
    for name, spec in (("onnx", f"onnx:{exported}"), ("torch", str(SHIPPED))):
        result = evaluate([spec, "heuristic"], games=20, seed=3, save_games=tmp_path / name)
        records = [load(path) for path in sorted(result.pop("saved_games"))]
        runs[name] = (result, [(r.seed, r.actions, r.scores) for r in records])
    (onnx_result, onnx_games), (torch_result, torch_games) = runs["onnx"], runs["torch"]
    assert onnx_games == torch_games  # game for game, move for move
    assert [a.pop("name") for a in onnx_result["agents"]] == ["onnx:policy-2-4p", "heuristic"]
    assert [a.pop("name") for a in torch_result["agents"]] == ["policy-2-4p", "heuristic"]
    assert onnx_result["agents"][0].pop("spec") == f"onnx:{exported}"
    assert torch_result["agents"][0].pop("spec") == str(SHIPPED)
    assert onnx_result == torch_result


def test_a_model_plays_in_each_mode_of_a_checkpoint(exported):
    """``sample:FILE.onnx`` and ``threshold:P:FILE.onnx`` play the model drawn, as ``sample:`` and
    ``threshold:`` play a checkpoint: each draw the checkpoint's from the same seed (the two give
    the same probabilities within 1e-5), and a thresholded draw never an action below P."""
    sampled, cut = parse_agent_spec(f"sample:{exported}"), parse_agent_spec(f"threshold:0.05:{exported}")
    assert (sampled.kind, sampled.play_mode, sampled.label) == (
        AgentKind.ONNX,
        SAMPLED,
        "sample:onnx:policy-2-4p",
    )
    assert (cut.kind, cut.play_mode) == (AgentKind.ONNX, PlayMode(threshold=0.05))
    assert cut.label == "threshold:0.05:onnx:policy-2-4p" and cut.checkpoint is None
    assert parse_agent_spec(f"onnx:{exported}").play_mode == GREEDY
    obs, masks = sample_positions(300, seed=7)
    for prefix in ("sample:", "threshold:0.05:"):
        model, checkpoint = (
            make_agent(prefix + str(exported), seed=5),
            make_agent(prefix + str(SHIPPED), seed=5),
        )
        assert isinstance(model, OnnxAgent) and not model.deterministic
        assert check_agent_spec(prefix + str(exported)).kind is AgentKind.ONNX
        drawn = [model.act(o, m) for o, m in zip(obs, masks, strict=True)]
        assert sum(a == checkpoint.act(o, m) for a, o, m in zip(drawn, obs, masks, strict=True)) >= 299
        if prefix == "threshold:0.05:":
            probs = model.probabilities(obs, masks)
            kept = (probs >= 0.05) | (probs == probs.max(axis=1, keepdims=True))
            assert all(kept[k, a] for k, a in enumerate(drawn))
    result = evaluate([f"threshold:0.05:{exported}", "heuristic"], games=4, seed=3)
    assert [agent["name"] for agent in result["agents"]] == ["threshold:0.05:onnx:policy-2-4p", "heuristic"]


def test_the_search_player_reads_the_same_priors_and_values_from_either(exported):
    from island_fortress_env.engine import Game

    state = Game(num_players=3).new_initial_state(seed=5)
    for _ in range(40):
        state.apply_action(state.legal_actions()[0])
    check_agent_spec(f"search:{exported}:4")
    from_onnx, from_torch = SearchAgent(exported, 4, seed=0), SearchAgent(SHIPPED, 4, seed=0)
    (p1, v1), (p2, v2) = (
        ReferenceSearchAgent(agent.evaluator, 4)._evaluate(state) for agent in (from_onnx, from_torch)
    )
    assert p1.keys() == p2.keys() and max(abs(p1[a] - p2[a]) for a in p1) < 1e-5
    np.testing.assert_allclose(v1, v2, atol=1e-5)
    assert from_onnx.act(None, None, state) in state.legal_actions()


def test_the_web_app_offers_an_onnx_model_for_its_top_actions(exported, tmp_path):
    pytest.importorskip("starlette", reason="the web app needs the [web] extra")
    from starlette.testclient import TestClient

    from island_fortress_env.web import create_app

    spec = f"onnx:{exported}"
    with TestClient(create_app(["random", spec], tmp_path)) as client:
        assert client.get("/api/config").json()["checkpoints"] == [spec]
        snap = client.post("/api/play", json={"players": 2, "seat": 0, "opponents": [spec], "seed": 1}).json()
        top = client.get(
            f"/api/games/{snap['id']}/policy", params={"token": snap["token"], "checkpoint": spec}
        )
        assert top.status_code == 200 and top.json()["actions"]


NO_TORCH = """
import sys

class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is not to be imported here", name=name)

sys.meta_path.insert(0, NoTorch())
"""


def test_every_command_plays_it_without_importing_torch(exported, tmp_path):
    """evaluate, tournament, play's agents, the web app's analysis, a search over it and a mixture
    holding it, in a process where importing torch fails."""
    script = NO_TORCH + textwrap.dedent(f"""
        import importlib.util
        from island_fortress_env.cli import app as cli
        from island_fortress_env.players import make_agent
        spec = "onnx:{exported}"
        assert cli.main(["evaluate", spec, "heuristic", "random", "--games", "3", "--no-progress"]) == 0
        if importlib.util.find_spec("openskill"):
            tournament = ["tournament", spec, "random", "--players", "2", "--games", "2", "--no-progress"]
            assert cli.main(tournament) == 0
        assert cli.main(["evaluate", "search:{exported}:4", "random", "--games", "1", "--no-progress"]) == 0
        mixture = {str(tmp_path / "mixture.json")!r}
        open(mixture, "w").write('{{"mixture": {{"' + spec + '": 0.5, "random": 0.5}}}}')
        assert cli.main(["evaluate", "mixture:" + mixture, "heuristic", "--games", "2", "--no-progress"]) == 0
        import numpy as np
        from island_fortress_env.env.observation import OBS_SIZE
        mask = np.zeros(380, dtype=np.int8); mask[[3, 7]] = 1
        assert make_agent(spec, seed=0).act(np.zeros(OBS_SIZE, np.float32), mask) in (3, 7)
        if importlib.util.find_spec("starlette"):
            from island_fortress_env.web.app import WebApp
            web = WebApp([spec], {str(tmp_path / "games")!r})
            assert web.analyst.checkpoints == (spec,)
        print("torch imported:", "torch" in sys.modules)
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "torch imported: False"


# --------------------------------------------------------------------------- bad files


def tiny_model(
    obs_size: int = OBS_SIZE,
    signature: dict | None = None,
    domain: str = "",
    extra_node: object | None = None,
    external: bool = False,
    value_keepdims: int = 0,
) -> bytes:
    """A model of the right interface (uniform over the legal actions, the value the sum of the
    observation), changed as asked."""
    obs = helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", obs_size])
    mask = helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["batch", NUM_ACTIONS])
    logp = helper.make_tensor_value_info("log_probs", TensorProto.FLOAT, ["batch", NUM_ACTIONS])
    value = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["batch"])
    low = helper.make_tensor("low", TensorProto.FLOAT, [], [-1e30])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    if external:
        low.data_location = TensorProto.EXTERNAL
        entry = low.external_data.add()
        entry.key, entry.value = "location", "../../etc/passwd"
    nodes = [
        helper.make_node("Where", ["action_mask", "zero", "low"], ["logits"], domain=domain),
        helper.make_node("LogSoftmax", ["logits"], ["log_probs"], axis=-1),
        helper.make_node("ReduceSum", ["observation", "axes"], ["value"], keepdims=value_keepdims),
    ]
    if extra_node is not None:
        nodes.append(extra_node)
    graph = helper.make_graph(nodes, "tiny", [obs, mask], [logp, value], initializer=[low, zero, axes])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    helper.set_model_props(
        model, {onnx_agent.META_SIGNATURE: json.dumps(space_signature() if signature is None else signature)}
    )
    return model.SerializeToString()


def test_a_model_of_the_interface_plays_whoever_made_it(tmp_path):
    path = tmp_path / "tiny.onnx"
    path.write_bytes(tiny_model())
    check_agent_spec(f"onnx:{path}")
    agent = make_agent(f"onnx:{path}", seed=0)
    mask = np.zeros((2, NUM_ACTIONS), dtype=np.int8)
    mask[0, [5, 9]] = 1
    mask[1, 200] = 1
    probs = agent.probabilities(np.ones((2, OBS_SIZE), np.float32), mask)
    np.testing.assert_allclose(probs[0, [5, 9]], 0.5, rtol=1e-6)
    assert probs[1, 200] == pytest.approx(1.0) and probs.sum() == pytest.approx(2.0)


def _bad(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


BAD_MODELS = {
    "not-onnx.onnx": (lambda: b"\x00\xff" * 100, "not an ONNX model"),
    "text.onnx": (lambda: b"hello, this is not a model\n", "not an ONNX model"),
    "empty.onnx": (lambda: b"", "not an ONNX model"),
    "checkpoint.onnx": (lambda: SHIPPED.read_bytes(), "is a zip file, not an ONNX model"),
    "small-obs.onnx": (lambda: tiny_model(obs_size=1000), "input observation is float32[batch, 1000]"),
    "other-layout.onnx": (
        lambda: tiny_model(signature={**space_signature(), "layout_digest": "0" * 16}),
        "does not match this environment's spaces",
    ),
    "custom-op.onnx": (lambda: tiny_model(domain="com.example"), "only standard ONNX operators"),
    "external.onnx": (lambda: tiny_model(external=True), "external data"),
    "value-shape.onnx": (lambda: tiny_model(value_keepdims=1), "value (2, 1) for 2 positions"),
    "loop.onnx": (
        lambda: tiny_model(
            extra_node=helper.make_node(
                "If",
                ["action_mask"],
                ["x"],
                then_branch=helper.make_graph([], "then", [], []),
                else_branch=helper.make_graph([], "else", [], []),
            )
        ),
        "control flow",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_MODELS))
def test_a_bad_model_is_one_error_before_any_game(tmp_path, name, capsys):
    make, words = BAD_MODELS[name]
    path = _bad(tmp_path, name, make())
    with pytest.raises(AgentSpecError) as error:
        check_agent_spec(f"onnx:{path}")
    assert words in str(error.value) and str(path) in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evaluate", f"onnx:{path}", "heuristic", "--games", "2"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_missing_large_and_special_files_are_refused(tmp_path, monkeypatch):
    for spec, words in (
        (f"onnx:{tmp_path / 'missing.onnx'}", "no such file"),
        (f"onnx:{tmp_path}", "a directory"),
        ("onnx:", "expected onnx:FILE"),
        (f"search:{tmp_path / 'missing.onnx'}:4", "no checkpoint file"),
    ):
        with pytest.raises(AgentSpecError, match=words):
            check_agent_spec(spec)
    path = _bad(tmp_path, "model.onnx", tiny_model())
    with pytest.raises(AgentSpecError, match="plays as onnx:"):
        check_agent_spec(str(path))  # a model named without onnx:
    monkeypatch.setattr(onnx_agent, "MAX_ONNX_BYTES", 100)
    with pytest.raises(AgentSpecError, match="larger than 100 bytes"):
        check_agent_spec(f"onnx:{path}")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.onnx")
        with pytest.raises(AgentSpecError, match="not a regular file"):
            check_agent_spec(f"onnx:{tmp_path / 'pipe.onnx'}")


# --------------------------------------------------------------------------- the export command


def _export(argv: list[str], capsys) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        sys.exit(cli.main(["export", *argv]))
    return exit_info.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["{tmp}/missing.zip", "{tmp}/out.onnx"], "no such file"),
        (["{tmp}/junk.zip", "{tmp}/out.onnx"], "not a zip file"),
        ([str(SB3), "{tmp}/out.onnx"], "an SB3 checkpoint; export takes a native one"),
        ([str(SHIPPED), "{tmp}/out.zip"], "name the model file NAME.onnx"),
        ([str(SHIPPED), "{tmp}/junk.zip/out.onnx"], "cannot be created"),
        ([str(SHIPPED), "{tmp}/a-folder.onnx"], "is a directory"),
        ([str(SHIPPED)], "the following arguments are required"),
    ],
)
def test_export_errors_are_one_line_and_exit_2(tmp_path, capsys, argv, words):
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    (tmp_path / "a-folder.onnx").mkdir()
    code, err = _export([a.format(tmp=tmp_path) for a in argv], capsys)
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "out.onnx").exists()


def test_export_writes_a_model_that_evaluate_plays(tmp_path, capsys):
    out = tmp_path / "policy.onnx"
    assert cli.main(["export", str(SHIPPED), str(out), "--positions", "32"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{out}: ") and "the same greedy action in 32" in line
    assert cli.main(["evaluate", f"onnx:{out}", "random", "--games", "2", "--no-progress"]) == 0
    assert "onnx:policy" in capsys.readouterr().out
