"""The text of ``island-fortress calibrate``'s report (``research/calibrate.py``): the exact
figures, then each budget's learned value, gap and recovered share, greedy and sampled, over the
seeds, from the report's JSON (``Calibration.to_json``)."""

from __future__ import annotations

from typing import Any


def _interval(spread: dict[str, Any] | None, percent: bool = False) -> str:
    """``mean [low, high]`` of a ``Spread``'s JSON (the interval left out for one seed)."""
    if spread is None:
        return "-"
    scale, unit, digits = (100.0, "%", 1) if percent else (1.0, "", 4)
    text = f"{scale * spread['mean']:.{digits}f}{unit}"
    if spread["ci95"] is not None:
        low, high = spread["ci95"]
        text += f" [{scale * low:.{digits}f}, {scale * high:.{digits}f}]"
    return text


def format_calibration(report: dict[str, Any]) -> str:
    """The text of a calibration (``Calibration.to_json``): the exact figures, then each budget's
    learned value, gap and recovered share, greedy and sampled, over the seeds."""
    exact, settings = report["exact"], report["settings"]
    ppo = settings["ppo"]
    first, second = exact["best_response"]
    seeds = report["seeds"]
    lines = [
        f"calibrate {report['game']} against {report['target']} ({report['histories']:,} histories, "
        f"{report['information_states']:,} information states)",
        f"exact best responses: {first:+.4f} in seat 0, {second:+.4f} in seat 1; exploitability "
        f"{exact['exploitability']:.4f} (OpenSpiel)",
        f"learner: PPO from scratch, learning rate {ppo['learning_rate']:g} annealed, {ppo['n_epochs']} "
        f"epochs, minibatches of {ppo['minibatch_size']} of {settings['rollout_decisions']}-decision "
        f"rollouts, entropy {ppo['ent_coef']:g}, target KL {ppo['target_kl']:g}; "
        f"{len(seeds)} seed(s) {seeds[0]}..{seeds[-1]}",
        "",
        f"{'decisions':>10}  {'play':<8} {'learned (mean [95% over seeds])':<32} {'gap':<32} recovered",
    ]
    for summary in [report["start"], *report["budgets"]]:
        for mode in ("greedy", "sampled"):
            figures = summary[mode]
            budget = (f"{summary['budget']:,}" if summary["budget"] else "start") if mode == "greedy" else ""
            lines.append(
                f"{budget:>10}  {mode:<8} {_interval(figures['value']):<32} {_interval(figures['gap']):<32} "
                f"{_interval(figures['recovered'], percent=True)}"
            )
    lines += [
        "",
        "learned: the exact value of the learner's policy against the target, the mean of its two seats "
        "(greedy: its most probable action; sampled: its softmax; start: the initial weights, untrained); "
        "gap: exact exploitability - learned; recovered: learned / exact exploitability (0: the target's "
        "own play)",
    ]
    return "\n".join(lines)
