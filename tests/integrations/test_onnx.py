"""An exported policy played where torch is not installed (``make test-onnx``: ``.venv-onnx`` has
the package with its ``onnx`` and ``test`` extras only). The model and the checkpoint's own
``evaluate`` results are made beforehand in ``.venv`` (``island-fortress export`` needs torch);
``ONNX_MODEL`` names the model (default ``build/onnx/policy-2-4p.onnx``), and the results are the
file beside it, ``*.evaluate.json``."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="the onnx extra: pip install '.[onnx]'")

ROOT = Path(__file__).resolve().parents[2]
MODEL = Path(os.environ.get("ONNX_MODEL", ROOT / "build" / "onnx" / "policy-2-4p.onnx"))
# The checkpoint's own results: evaluate CHECKPOINT heuristic --games 20 --seed 3 --json
EVALUATION = MODEL.with_suffix(".evaluate.json")

pytestmark = pytest.mark.skipif(
    not MODEL.is_file(), reason=f"no exported model {MODEL} (make test-onnx makes it)"
)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    script = "import sys; from island_fortress_env.cli import app as cli; code = cli.main(sys.argv[1:]); "
    script += "print('torch imported:', 'torch' in sys.modules, file=sys.stderr); sys.exit(code)"
    return subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip


def test_torch_is_not_installed_here():
    if os.environ.get("ONNX_WITHOUT_TORCH") != "1":
        pytest.skip("set ONNX_WITHOUT_TORCH=1 where torch must be absent (make test-onnx does)")
    assert importlib.util.find_spec("torch") is None


def test_the_model_plays_the_checkpoints_games_without_torch():
    done = _cli(
        "evaluate", f"onnx:{MODEL}", "heuristic", "--games", "20", "--seed", "3", "--json", "--no-progress"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == "torch imported: False"
    result = json.loads(done.stdout)
    assert [a["name"] for a in result["agents"]] == [f"onnx:{MODEL.stem}", "heuristic"]
    if not EVALUATION.is_file():
        pytest.skip(f"no {EVALUATION} to compare with (make test-onnx writes it)")
    expected = json.loads(EVALUATION.read_text("utf-8"))
    for run in (result, expected):
        for agent in run["agents"]:
            del agent["name"], agent["spec"]
    assert result == expected


def test_a_ladder_a_search_and_a_bad_model_without_torch(tmp_path):
    for argv, shown in (
        (
            ("tournament", f"onnx:{MODEL}", "random", "heuristic", "--players", "2", "3", "--games", "3"),
            "Nash",
        ),
        (("evaluate", f"search:{MODEL}:4", "random", "--games", "1"), f"search:{MODEL}:4"),
    ):
        done = _cli(*argv, "--no-progress")
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stderr.strip().splitlines()[-1] == "torch imported: False"
        assert shown in done.stdout
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    done = _cli("evaluate", f"onnx:{bad}", "random", "--games", "1")
    assert done.returncode == 2 and "not an ONNX model" in done.stderr.splitlines()[0]
