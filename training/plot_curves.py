"""Plot learning curves from TensorBoard event files to a PNG (for the README).

    island-fortress plot-curves runs/baseline-3p_1 --out docs/learning_curve.png
    island-fortress plot-curves runs/policy-2-4p --out docs/learning_curve_2-4p.png

A native run (``training/ppo.py``) is recognised by its ``eval/`` curves and plotted as the greedy
win rate against the heuristic per table size, against decisions learned from and wall-clock time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

DEFAULT_TAGS = (
    "game/win_rate_vs_random",
    "game/win_rate_vs_heuristic",
    "game/win_rate_vs_snapshot",
    "game/score",
    "train/entropy_loss",
    "train/value_loss",
)
NATIVE_TAGS = (
    "eval/win_rate_vs_heuristic_2p",
    "eval_time/win_rate_vs_heuristic_2p",
    "eval/win_rate_vs_heuristic_3p",
    "eval_time/win_rate_vs_heuristic_3p",
    "eval/win_rate_vs_heuristic_4p",
    "eval_time/win_rate_vs_heuristic_4p",
    "eval/win_rate_vs_random_4p",
    "losses/entropy",
)


def read_scalars(run_dir: str | Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar series of a TensorBoard run directory: tag -> [(step, value)]."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def smooth(values: list[float], weight: float = 0.8) -> list[float]:
    """TensorBoard's exponential moving average."""
    out, last = [], values[0] if values else 0.0
    for v in values:
        last = last * weight + (1 - weight) * v
        out.append(last)
    return out


def plot(run_dir: str | Path, out: str | Path, tags: Sequence[str] | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scalars = read_scalars(run_dir)
    if tags is None:
        tags = NATIVE_TAGS if "eval/win_rate_vs_heuristic_3p" in scalars else DEFAULT_TAGS
    present = [t for t in tags if t in scalars]
    if not present:
        raise SystemExit(f"{run_dir}: none of the tags {list(tags)} were logged")
    cols = 2
    rows = (len(present) + 1) // 2
    fig, axes = plt.subplots(rows, cols, figsize=(10, 3 * rows), squeeze=False)
    for ax, tag in zip(axes.flat, present, strict=False):
        steps, values = zip(*scalars[tag], strict=False)
        ax.plot(steps, values, alpha=0.3, color="tab:blue")
        ax.plot(steps, smooth(list(values)), color="tab:blue")
        ax.set_title(tag)
        ax.set_xlabel(
            "wall-clock seconds" if tag.startswith("eval_time/")
            else "decisions learned from" if tag.split("/")[0] in ("eval", "losses") else "learner steps"
        )  # fmt: skip
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(present) :]:
        ax.axis("off")
    fig.suptitle(f"Island Fortress masked PPO: {Path(run_dir).name}")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    return out


RACE_TABLES = (2, 3, 4)


def plot_race(legs: Sequence[dict], out: str | Path) -> Path:
    """The learning race's curves (``bench_training --race M --curves PNG``): each leg's greedy win
    rate against the heuristic at 2, 3 and 4 players, against decisions learned from (top row) and
    against wall-clock seconds (bottom row), one line per leg name (the mean over its seeds where
    they were evaluated at the same points, else every seed's own line)."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(RACE_TABLES), figsize=(12, 6.5), squeeze=False)
    colours: dict[str, str] = {}
    for leg in legs:
        colour = colours.setdefault(leg["name"], f"C{len(colours)}")
        label = (
            leg["name"]
            if sum(other["name"] == leg["name"] for other in legs[: legs.index(leg)]) == 0
            else None
        )
        for col, n in enumerate(RACE_TABLES):
            for row, prefix in enumerate(("eval", "eval_time")):
                points = leg["curves"].get(f"{prefix}/win_rate_vs_heuristic_{n}p", [])
                if not points:
                    continue
                x, y = zip(*points, strict=True)
                axes[row][col].plot(x, [100 * v for v in y], "o-", color=colour, alpha=0.8, label=label)
    millions = matplotlib.ticker.FuncFormatter(lambda x, _pos: f"{x / 1e6:g}M")
    for col, n in enumerate(RACE_TABLES):
        axes[0][col].xaxis.set_major_formatter(millions)
        for row, xlabel in enumerate(("decisions learned from", "wall-clock seconds (imitation included)")):
            ax = axes[row][col]
            ax.set_title(f"{n} players: greedy win rate against the heuristic (%)", fontsize=9)
            ax.axhline(100 / n, color="grey", linestyle=":", linewidth=1)  # the chance share
            ax.set_xlabel(xlabel)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Island Fortress: the learning race, the same minutes of training each on this machine")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out
