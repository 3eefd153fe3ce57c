"""Behaviour-cloning warm start: imitate a teacher (the heuristic, or a search player) before PPO.

PPO from a random policy needs a long time to discover the long plans of this game (gather
Workers and blocks for rounds, then build for row majorities). Imitating the rule-based
player first puts the policy near a sensible strategy; PPO then improves on it. The policy
head learns the teacher's actions (masked cross-entropy) and the value head the return that
followed (final-score share + the win/loss outcome, in the same units as the PPO reward).

The games are played through ``players.runner``: the heuristic's in a batch of C++ core games
(``island_fortress_env.vector``, every seat decided by ``heuristic_actions()``), thousands of games
in seconds, or in its Python engine twin where the core is not built (the same games); any other
teacher's one game at a time in the Python engine, split over processes.

With ``pretrain.teacher`` a search player over the checkpoint the run starts from
(``policy.init_from``), the warm start is one step of expert iteration (Anthony et al., 2017;
AlphaZero's policy target): the network learns the moves its own search picks, and the values
those games ended with.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from island_fortress_env import vector
from island_fortress_env.agents.network import torch_threads
from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.players.seeds import Stream, agent_seed, stream_seed
from island_fortress_env.training.collect import split, starmap
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.shaping import gain_rewards

CORE_SLOTS = 64  # games a core batch of demonstrations plays at once


def collect_demonstrations(
    num_players: int,
    env_options: dict,
    games: int,
    seed: int,
    teacher: str = "heuristic",
    reward_win: float = 1.0,
    reward_vp: float = 1.0,
    reward_vp_relative: bool = False,
    threads: int = 1,
    rows: tuple[RowBlocks, RowBlocks] | None = None,
    first: int = 0,
    backend: str = "auto",
) -> dict[str, np.ndarray]:
    """Every decision of every seat in ``games`` teacher-vs-teacher games at tables of
    ``num_players``, with the return that followed it (the trainers' reward,
    ``training/shaping.py``, summed to the end): ``obs`` (float16), ``masks``, ``actions``,
    ``returns``, and who decided: ``games`` (the game's number, from ``first`` on) and ``seats``.

    The games are played through ``players.runner``, game ``g`` dealt like episode 0 of slot ``g``
    of a batch seeded ``seed``: the heuristic's in a batch of ``vector.make`` on ``backend`` (C++
    core games on ``threads`` threads, or the Python engine's where the core is not built or with
    ``"python"``: the same games; every seat decided by the batch's heuristic, seeded like the
    deal); any other teacher's one game at a time in the Python engine, seat ``i`` of game ``g``
    seeded ``players.seeds.agent_seed(seed, g, i)``. With ``rows`` (``demonstration_rows()``) the
    observations and masks are appended there instead (several tables' games gathered before one
    join) and left out of the result."""
    from island_fortress_env.players.runner import GameRunner, Seating
    from island_fortress_env.players.seat_policies import BatchSeats, seat_policy

    batched = teacher == "heuristic"
    policy = BatchSeats("heuristic") if batched else seat_policy(teacher, make_agent)
    obs_rows, mask_rows = rows if rows is not None else demonstration_rows()
    slots = max(1, min(games, CORE_SLOTS)) if batched else 1
    batch = vector.make(
        slots,
        num_players=num_players,
        seed=seed,
        threads=threads,
        backend=backend if batched else "python",
        **env_options,
    )
    dealt = iter(range(first, first + games))
    recorded: list[tuple[np.ndarray, ...]] = []  # per tick: actions, games, seats, scores
    scores = np.zeros((slots, num_players), dtype=np.int64)  # each slot's game's scores so far

    def next_seating(_slot: int) -> Seating | None:
        g = next(dealt, None)
        if g is None:
            return None
        seeds = tuple(agent_seed(seed, g, i) for i in range(num_players))
        return Seating(num_players, vector.batch_game_seed(seed, g, 0), (policy,) * num_players, seeds, tag=g)

    runner = GameRunner(batch, next_seating, keep_actions=False)
    finals: dict[int, tuple[list[int], list[float]]] = {}
    while runner.playing:
        step = runner.step()
        obs_rows.extend(step.observations)
        mask_rows.extend(step.masks)
        numbers = np.array(step.tags, dtype=np.int64)
        recorded.append((step.actions, numbers, step.seats, scores[step.slots].copy()))
        scores += step.score_gains[:, :num_players]
        for game in step.finished:
            final = game.final
            winners = [p for p in range(num_players) if final.win[p] > 0]
            finals[game.seating.tag] = (list(final.score), win_loss_returns(num_players, winners))
            scores[game.slot] = 0
    actions, numbers, seats, at = (np.concatenate([r[k] for r in recorded]) for k in range(4))
    ordered = {g: finals[g] for g in range(first, first + games)}
    out = {
        "actions": actions.astype(np.int64),
        "returns": _returns(numbers, seats, at, ordered, reward_win, reward_vp, reward_vp_relative),
        "games": numbers,
        "seats": seats.astype(np.int64),
    }
    if rows is None:
        out = {"obs": obs_rows.join(), "masks": mask_rows.join(), **out}
    return out


def _returns(
    numbers: np.ndarray,
    seats: np.ndarray,
    at: np.ndarray,
    finals: Mapping[int, tuple[list[int], list[float]]],
    reward_win: float,
    reward_vp: float,
    reward_vp_relative: bool,
) -> np.ndarray:
    """The return that followed each decision: row i by seat ``seats[i]`` of game ``numbers[i]``
    when every seat's score was ``at[i]``, from each game's final scores and win/loss returns."""
    if not len(numbers):
        return np.zeros(0, np.float32)
    first = min(finals)
    scores = np.array([finals[g][0] for g in range(first, first + len(finals))], dtype=np.int64)
    outcomes = np.array([finals[g][1] for g in range(first, first + len(finals))], dtype=np.float64)
    games, rows = numbers - first, np.arange(len(numbers))
    players = np.full(len(numbers), scores.shape[1])
    shaped = gain_rewards(scores[games] - at, players, reward_vp_relative)[rows, seats]
    return (reward_vp * shaped + reward_win * outcomes[games, seats]).astype(np.float32)


class RowBlocks:
    """Rows of one shape and dtype appended in blocks of about 64 MB, each an allocation of its own
    (so that a block freed goes back to the system), joined once by ``join``: the peak is the rows
    plus one block, where a list of small arrays and ``np.concatenate`` would hold them twice."""

    BLOCK_BYTES = 64 << 20

    def __init__(self, row_shape: tuple[int, ...], dtype: Any) -> None:
        self.row_shape, self.dtype = row_shape, np.dtype(dtype)
        self.block_rows = max(1, self.BLOCK_BYTES // (self.dtype.itemsize * int(np.prod(row_shape))))
        self.blocks: list[np.ndarray] = []
        self.filled = 0  # rows written in the last block

    def __len__(self) -> int:
        return max(0, len(self.blocks) - 1) * self.block_rows + (self.filled if self.blocks else 0)

    def extend(self, rows: np.ndarray) -> None:
        """Append ``rows`` (cast to the blocks' dtype as ``astype`` would)."""
        done = 0
        while done < len(rows):
            if not self.blocks or self.filled == self.block_rows:
                self.blocks.append(np.empty((self.block_rows, *self.row_shape), self.dtype))
                self.filled = 0
            take = min(len(rows) - done, self.block_rows - self.filled)
            self.blocks[-1][self.filled : self.filled + take] = rows[done : done + take]
            self.filled += take
            done += take

    def join(self) -> np.ndarray:
        """Every row in order, in one array; the blocks are freed as they are copied (and ``self``
        left empty)."""
        out = np.empty((len(self), *self.row_shape), self.dtype)
        at = 0
        while self.blocks:
            block = self.blocks.pop(0)
            rows = self.block_rows if self.blocks else self.filled
            out[at : at + rows] = block[:rows]
            at += rows
            del block
        self.filled = 0
        return out


def demonstration_rows() -> tuple[RowBlocks, RowBlocks]:
    """Empty blocks for the demonstrations' observations (float16) and action masks."""
    return RowBlocks((OBS_SIZE,), np.float16), RowBlocks((NUM_ACTIONS,), np.bool_)


def _fit(
    module: Any,
    predict: Callable[[Any, Any], tuple[Any, Any]],
    log: Callable[[dict[str, Any]], None],
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    progress: bool,
    bfloat16: bool = False,
    deadline: float | None = None,
) -> dict[str, Any]:
    """The imitation loop shared by both trainers: masked cross-entropy on the demonstrated
    actions + 0.5 x value MSE on the returns that followed. ``predict(obs, masks)`` gives masked
    action logits and values; ``log(record)`` reports each epoch. ``bfloat16``: the forward pass
    under CPU autocast (the native network keeps its heads in float32), as the PPO update runs
    with ``train.update_dtype`` bfloat16. At ``deadline`` (``time.monotonic()``) the fit stops
    after the batch under way: the report's ``fitted`` says how many samples it learned from."""
    import torch
    from tqdm import tqdm

    module.train()
    optimizer = torch.optim.Adam(module.parameters(), lr=learning_rate)
    n = len(data["actions"])
    assert data["obs"].shape[1] == OBS_SIZE and data["masks"].shape[1] == NUM_ACTIONS
    rng = np.random.default_rng(seed)
    history: list[dict[str, Any]] = []
    fitted, stopped = 0, False
    for epoch in range(epochs):
        if stopped:
            break
        order = rng.permutation(n)
        losses, correct, seen = [], 0, 0
        for start in tqdm(range(0, n, batch_size), desc=f"imitation epoch {epoch + 1}/{epochs}",
                          disable=not progress, unit="batch", leave=False):  # fmt: skip
            idx = order[start : start + batch_size]
            obs = torch.as_tensor(data["obs"][idx], dtype=torch.float32)
            masks = torch.as_tensor(data["masks"][idx])
            actions = torch.as_tensor(data["actions"][idx])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bfloat16):
                logits, values = predict(obs, masks)
            policy_loss = torch.nn.functional.cross_entropy(logits, actions)
            value_loss = torch.nn.functional.mse_loss(values, torch.as_tensor(data["returns"][idx]))
            loss = policy_loss + 0.5 * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 0.5)
            optimizer.step()
            losses.append(loss.item())
            correct += int((logits.argmax(dim=1) == actions).sum())
            seen += len(idx)
            if deadline is not None and time.monotonic() >= deadline:
                stopped = True
                break
        fitted += seen
        record = {"epoch": epoch + 1, "loss": float(np.mean(losses)), "accuracy": correct / seen}
        history.append(record)
        log(record)
        if progress:
            print(
                f"imitation epoch {epoch + 1}: loss {record['loss']:.3f}, accuracy {record['accuracy']:.1%}"
            )
    module.eval()
    return {"samples": n, "epochs": history, "fitted": fitted, "stopped_early": stopped}


def behaviour_cloning(
    model,
    data: dict[str, np.ndarray],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, Any]:
    """Fit an SB3 ``model.policy`` to the demonstrations; logs ``pretrain/*`` to the model's logger."""
    policy = model.policy

    def predict(obs: Any, masks: Any) -> tuple[Any, Any]:
        dist = policy.get_distribution(obs, action_masks=masks.numpy())
        return dist.distribution.logits, policy.predict_values(obs).flatten()  # masked log-probs

    def log(record: dict[str, Any]) -> None:
        model.logger.record("pretrain/loss", record["loss"])
        model.logger.record("pretrain/accuracy", record["accuracy"])
        model.logger.dump(step=record["epoch"])

    report = _fit(policy, predict, log, data, epochs, batch_size, learning_rate, seed, progress)
    policy.train()  # SB3 keeps its policy in training mode
    return report


def imitate(net, data: dict[str, np.ndarray], epochs: int, batch_size: int, learning_rate: float,
            seed: int = 0, progress: bool = False, writer: Any = None,
            bfloat16: bool = False, deadline: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Fit a native ``ActorCritic`` to the demonstrations (``bfloat16``: its torso under autocast);
    logs ``pretrain/loss`` and ``pretrain/accuracy`` per epoch to ``writer`` (TensorBoard)."""

    def log(record: dict[str, Any]) -> None:
        if writer is not None:
            writer.add_scalar("pretrain/loss", record["loss"], record["epoch"])
            writer.add_scalar("pretrain/accuracy", record["accuracy"], record["epoch"])

    return _fit(net, net, log, data, epochs, batch_size, learning_rate, seed, progress, bfloat16, deadline)


def warm_start(
    net: Any, cfg: NativeConfig, writer: Any, bfloat16: bool = False, deadline: float | None = None
) -> dict[str, Any]:
    """The native trainer's warm start: ``cfg.pretrain.games`` games of ``cfg.pretrain.teacher``,
    split over the table sizes in use by their ``tables`` weights and played on ``1 +
    train.workers`` or ``train.torch_threads`` threads of the C++ core (the heuristic), whichever
    is more, or as many processes (any other teacher, or no core), then ``imitate`` on as many
    torch threads as there are cores, up to that
    (no collector runs yet; ``bfloat16`` as the PPO update's dtype), stopped at ``deadline``.
    Returns ``imitate``'s report, with the decisions played (``samples``) and the seconds taken."""
    start = time.monotonic()
    pre = cfg.pretrain
    weights = pre.table_weights(cfg.tables)
    total = sum(weights.values())
    processes = max(1 + cfg.train.workers, cfg.train.torch_threads)  # the run's share of the cores
    reward = (cfg.reward.win, cfg.reward.vp, cfg.reward.vp_relative)
    batched = pre.teacher == "heuristic"  # a batch of core games on threads, else processes
    jobs = []  # (players, options, games, seed, teacher, *reward, threads, rows, first)
    obs, masks = demonstration_rows()  # every table's observations gathered in one set of blocks
    for n in TABLE_SIZES:
        games = round(pre.games * weights[n] / total)
        seed = stream_seed(cfg.seed, Stream.DEMONSTRATIONS, n)
        chunks = [range(games)] if batched else split(games, processes)
        rows = (obs, masks) if batched else None
        for chunk in chunks:  # game g of the table dealt the same in whichever part it is played
            job = (
                n,
                dict(cfg.env.options),
                len(chunk),
                seed,
                pre.teacher,
                *reward,
                processes,
                rows,
                chunk.start,
            )
            jobs.append(job)
    jobs = [job for job in jobs if job[2]]
    in_core = batched and vector.resolve_backend() == "core"
    where = f"{processes} thread(s) of the C++ core" if in_core else f"{processes} process(es)"
    print(
        f"imitation: playing {sum(j[2] for j in jobs)} games of {pre.teacher} "
        f"at tables {sorted({j[0] for j in jobs})} in {where}",
        flush=True,
    )
    if batched:
        parts = [collect_demonstrations(*job) for job in jobs]
        data = {"obs": obs.join(), "masks": masks.join()}
    else:
        parts = starmap(collect_demonstrations, jobs, processes)
        data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "masks")}
    data.update({k: np.concatenate([p[k] for p in parts]) for k in ("actions", "returns")})
    with torch_threads(min(processes, os.cpu_count() or 1)):  # more threads than cores: far slower
        report = imitate(
            net,
            data,
            pre.epochs,
            pre.batch_size,
            pre.learning_rate,
            seed=cfg.seed,
            progress=cfg.logging.progress_bar,
            writer=writer,
            bfloat16=bfloat16,
            deadline=deadline,
        )
    report["games"] = sum(j[2] for j in jobs)
    report["seconds"] = time.monotonic() - start
    return report
