"""One package tree: ``training/`` is installed as ``island_fortress_env.training`` by the build
backend's package mapping (no symlink), and the shipped policy travels in the wheel as package data.

The wheel test builds the wheel (or takes ``$ISLAND_FORTRESS_WHEEL``, one already built), installs
it in a fresh virtual environment away from the repository and plays the search player over the
shipped policy there. It takes minutes, so it runs where ``ISLAND_FORTRESS_TEST_WHEEL=1`` is set
(``make test-wheel``, part of ``make test-integrations`` and so of CI).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
POLICY = "island_fortress_env/checkpoints/policy-2-4p-v3.zip"


def test_training_is_mapped_into_the_package_not_linked():
    assert not (ROOT / "island_fortress_env" / "training").exists()
    assert not any(p.is_symlink() for p in ROOT.joinpath("island_fortress_env").rglob("*"))
    import island_fortress_env.training.config as config

    assert Path(config.__file__).resolve().parent == ROOT / "training"


def test_the_search_player_finds_the_shipped_policy_in_a_checkout():
    from island_fortress_env.players.specs import SHIPPED_POLICY

    assert SHIPPED_POLICY.is_file() and SHIPPED_POLICY.name == "policy-2-4p-v3.zip"


def _wheel(tmp_path: Path) -> Path:
    given = os.environ.get("ISLAND_FORTRESS_WHEEL")
    if given:
        return Path(given)
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT),
         f"-Cbuild-dir={ROOT / 'build' / 'wheel'}"],  # a folder of its own: the editable build's stays
        check=True,
    )  # fmt: skip
    (wheel,) = out.glob("island_fortress_env-*.whl")
    return wheel


@pytest.mark.skipif(
    os.environ.get("ISLAND_FORTRESS_TEST_WHEEL") != "1", reason="ISLAND_FORTRESS_TEST_WHEEL=1 runs it"
)
def test_a_wheel_installed_away_from_the_repository_plays_the_search_player(tmp_path):
    wheel = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert POLICY in names and "island_fortress_env/training/config.py" in names
    assert not {n for n in names if n.startswith("island_fortress_env/checkpoints/")} - {POLICY}
    assert not any(
        n.startswith(("checkpoints/", "training/", "island_fortress_env/core/src/")) for n in names
    )

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)  # the CPU build first, as the README installs
    subprocess.run([*pip, str(wheel), "-c", "/dev/stdin"], input=b"torch==2.13.0\n", check=True)
    away = tmp_path / "elsewhere"
    away.mkdir()
    run = subprocess.run(
        [
            str(env_dir / "bin" / "island-fortress"),
            "evaluate",
            "search:8",
            "random",
            "--games",
            "2",
            "--no-progress",
        ],
        cwd=away,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "search:8" in run.stdout and "random" in run.stdout
    where = subprocess.run(
        [str(python), "-c", "import island_fortress_env.players.specs as s; print(s.SHIPPED_POLICY)"],
        cwd=away,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(env_dir)) and where.endswith(POLICY)
