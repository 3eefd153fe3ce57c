"""SB3 callbacks: the game's own figures in TensorBoard, the snapshot pool, checkpoints with
metadata, and a tqdm progress bar (SB3's own needs ``rich``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from tqdm import tqdm

from island_fortress_env.agents.checkpoint import write_metadata


class GameStatsCallback(BaseCallback):
    """Averages the ``episode_stats`` of finished games and logs them once per rollout.

    TensorBoard tags: ``game/win_rate_vs_<kind>``, ``game/win_rate``, ``game/score``,
    ``game/score_<component>``, ``game/length``, ``game/rounds``, ``game/jade_spent``,
    ``game/favors_played``, ``game/blocks_built``, ``game/episodes``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._stats: list[dict[str, Any]] = []
        self.episodes = 0

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            stats = info.get("episode_stats")
            if stats is not None:
                self._stats.append(stats)
        return True

    def _on_rollout_end(self) -> None:
        if not self._stats:
            return
        self.episodes += len(self._stats)
        by_kind: dict[str, list[float]] = defaultdict(list)
        for s in self._stats:
            by_kind[s["opponent"]].append(s["win"])
        for kind, wins in by_kind.items():
            self.logger.record(f"game/win_rate_vs_{kind}", float(np.mean(wins)))
        self.logger.record("game/win_rate", float(np.mean([s["win"] for s in self._stats])))
        for key in ("score", "length", "rounds", "jade_spent", "favors_played", "blocks_built"):
            self.logger.record(f"game/{key}", float(np.mean([s[key] for s in self._stats])))
        for comp in self._stats[0]["components"]:
            self.logger.record(
                f"game/score_{comp}", float(np.mean([s["components"][comp] for s in self._stats]))
            )
        self.logger.record("game/episodes", self.episodes)
        self._stats.clear()


def save_checkpoint(model, path: Path, metadata: dict[str, Any]) -> Path:
    """SB3 save, then our metadata inside the same zip."""
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(path))
    path = path if path.suffix == ".zip" else path.with_suffix(".zip")
    write_metadata(path, {**metadata, "num_timesteps": int(model.num_timesteps)})
    return path


class CheckpointCallback(BaseCallback):
    """Every ``every`` steps: ``<dir>/step_<n>.zip`` and ``<dir>/latest.zip``, with metadata."""

    def __init__(self, directory: Path, every: int, metadata: dict[str, Any]) -> None:
        super().__init__()
        self.directory = directory
        self.every = every
        self.metadata = metadata
        self._next = every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.every
            save_checkpoint(self.model, self.directory / f"step_{self.num_timesteps}.zip", self.metadata)
            save_checkpoint(self.model, self.directory / "latest.zip", self.metadata)
        return True


class SnapshotPoolCallback(BaseCallback):
    """Adds a frozen copy of the learner to the opponent pool every ``every`` steps."""

    def __init__(self, directory: Path, every: int, pool_size: int, metadata: dict[str, Any],
                 initial: list[str] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.directory = directory
        self.every = every
        self.pool_size = pool_size
        self.metadata = metadata
        self.pool: list[str] = list(initial or [])
        self._next = every

    def _on_training_start(self) -> None:
        self._next = self.num_timesteps + self.every
        if self.pool:
            self.training_env.env_method("set_snapshot_pool", self.pool)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.every
            path = save_checkpoint(
                self.model, self.directory / f"snapshot_{self.num_timesteps}.zip", self.metadata
            )
            self.pool = ([*self.pool, str(path)])[-self.pool_size :]
            self.training_env.env_method("set_snapshot_pool", self.pool)
            self.logger.record("league/pool_size", len(self.pool))
        return True


class ProgressBarCallback(BaseCallback):
    """A plain tqdm bar over the timesteps of this ``learn`` call."""

    def __init__(self, total: int, describe: Callable[[], str] | None = None) -> None:
        super().__init__()
        self.total = total
        self.describe = describe
        self.bar: tqdm | None = None
        self._last = 0

    def _on_training_start(self) -> None:
        self.bar = tqdm(total=self.total, unit="step", dynamic_ncols=True, desc="training")
        self._last = self.num_timesteps

    def _on_step(self) -> bool:
        assert self.bar is not None
        self.bar.update(self.num_timesteps - self._last)
        self._last = self.num_timesteps
        return True

    def _on_rollout_end(self) -> None:
        if self.bar is not None and self.describe is not None:
            self.bar.set_postfix_str(self.describe(), refresh=False)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
