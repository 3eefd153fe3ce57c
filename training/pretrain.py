"""Behaviour-cloning warm start: imitate a teacher (the heuristic, or a search player) before PPO.

PPO from a random policy needs a long time to discover the long plans of this game (gather
Workers and blocks for rounds, then build for row majorities). Imitating the rule-based
player first puts the policy near a sensible strategy; PPO then improves on it. The policy
head learns the teacher's actions (masked cross-entropy) and the value head the return that
followed (final-score share + the win/loss outcome, in the same units as the PPO reward).

The heuristic's games are played in a batch of C++ core games (``island_fortress_env.vector``,
every seat decided by ``heuristic_actions()``): thousands of games take seconds. Other teachers,
or a machine where the core is not built, play them one at a time through the Python env.

With ``pretrain.teacher`` a search player over the checkpoint the run starts from
(``policy.init_from``), the warm start is one step of expert iteration (Anthony et al., 2017;
AlphaZero's policy target): the network learns the moves its own search picks, and the values
those games ended with.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from island_fortress_env.engine.actions import NUM_ACTIONS
from island_fortress_env.engine.scoring import win_loss_returns
from island_fortress_env.env.aec import raw_env
from island_fortress_env.env.observation import OBS_SIZE
from island_fortress_env.players import make_agent
from island_fortress_env.training.collect import core_available, split, starmap
from island_fortress_env.training.config import TABLE_SIZES, NativeConfig
from island_fortress_env.training.shaping import score_gain_reward

CORE_SLOTS = 64  # games a core batch of demonstrations plays at once


def in_core(teacher: str) -> bool:
    """Whether ``teacher``'s games are played in a C++ core batch: the heuristic's, where the core
    is built; any other teacher's go through the Python env."""
    return teacher == "heuristic" and core_available()


def collect_demonstrations(
    num_players: int,
    env_options: dict,
    games: int,
    seed: int,
    teacher: str = "heuristic",
    reward_win: float = 1.0,
    reward_vp: float = 1.0,
    reward_vp_relative: bool = False,
    progress: bool = False,
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """Every decision of every seat in ``games`` teacher-vs-teacher games, with the return that
    followed it (the trainers' reward, ``training/shaping.py``, summed to the end): ``obs``
    (float16), ``masks``, ``actions``, ``returns``, and who decided: ``games`` (the game's number)
    and ``seats``. Heuristic games are played in the C++ core on ``threads`` threads (a batch
    seeded by ``seed``), other teachers' through the Python env (game ``g`` dealt from
    ``seed + g``)."""
    reward = (reward_win, reward_vp, reward_vp_relative)
    if in_core(teacher):
        return core_demonstrations(num_players, env_options, games, seed, *reward, threads=threads)
    from tqdm import tqdm

    env = raw_env(num_players=num_players, **env_options)
    agents = [make_agent(teacher, seed=seed + i) for i in range(num_players)]
    obs_rows: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    owners: list[tuple[int, int, list[int]]] = []  # (game, seat, every seat's score when acting)
    finals: list[tuple[list[int], list[float]]] = []
    for g in tqdm(range(games), desc="demonstrations", disable=not progress, unit="game"):
        env.reset(seed=seed + g)
        state = env.game_state
        while not state.is_terminal():
            seat = state.current_player()
            obs = env.observe(env.agent_selection)
            action = agents[seat].act(obs["observation"], obs["action_mask"], state)
            obs_rows.append(obs["observation"].astype(np.float16))
            masks.append(obs["action_mask"].astype(bool))
            actions.append(action)
            owners.append((g, seat, state.score[:]))
            env.step(action)
        finals.append((list(state.score), state.returns()))
    return {
        "obs": np.stack(obs_rows),
        "masks": np.stack(masks),
        "actions": np.array(actions, dtype=np.int64),
        "returns": _returns(owners, finals, *reward),
        "games": np.array([g for g, _, _ in owners], dtype=np.int64),
        "seats": np.array([seat for _, seat, _ in owners], dtype=np.int64),
    }


def _returns(
    owners: list[tuple[int, int, list[int]]],
    finals: list[tuple[list[int], list[float]]],
    reward_win: float,
    reward_vp: float,
    reward_vp_relative: bool,
) -> np.ndarray:
    """The return that followed each decision ``(game, seat, every seat's score when acting)``,
    from each game's final scores and win/loss returns."""
    return np.array(
        [
            reward_vp * score_gain_reward(scores, finals[g][0], seat, reward_vp_relative)
            + reward_win * finals[g][1][seat]
            for g, seat, scores in owners
        ],
        dtype=np.float32,
    )


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


def core_demonstrations(
    num_players: int,
    env_options: dict,
    games: int,
    seed: int,
    reward_win: float = 1.0,
    reward_vp: float = 1.0,
    reward_vp_relative: bool = False,
    threads: int = 1,
) -> dict[str, np.ndarray]:
    """``collect_demonstrations`` of the heuristic in a batch of core games
    (``play_core_demonstrations``)."""
    obs, masks = demonstration_rows()
    reward = (reward_win, reward_vp, reward_vp_relative)
    rest = play_core_demonstrations(num_players, env_options, games, seed, *reward, threads, obs, masks)
    return {"obs": obs.join(), "masks": masks.join(), **rest}


def play_core_demonstrations(
    num_players: int,
    env_options: dict,
    games: int,
    seed: int,
    reward_win: float,
    reward_vp: float,
    reward_vp_relative: bool,
    threads: int,
    obs_rows: RowBlocks,
    mask_rows: RowBlocks,
) -> dict[str, np.ndarray]:
    """The heuristic's games in a batch of core games: up to ``CORE_SLOTS`` games at once, each
    slot playing its share of the ``games`` one after another (the games numbered in the order they
    begin); a slot done with its share plays on at random, unread. Every decision's observation
    (float16) and mask are appended to ``obs_rows`` and ``mask_rows`` (several tables' games can so
    be gathered before one join); its ``actions``, ``returns``, ``games`` and ``seats`` are
    returned, as ``collect_demonstrations`` gives them."""
    import island_fortress_env.vector as vector

    slots = max(1, min(games, CORE_SLOTS))
    share = np.array([games // slots + (i < games % slots) for i in range(slots)])
    env = vector.make(slots, num_players=num_players, seed=seed, threads=threads, **env_options)
    env.reset()
    began = np.zeros(slots, dtype=np.int64)  # games each slot has begun
    number = np.arange(slots, dtype=np.int64)  # the game each slot plays
    scores = np.zeros((slots, num_players), dtype=np.int64)  # its scores so far
    playing = share > 0
    began[playing] = 1
    next_number = slots
    rows: list[tuple[np.ndarray, ...]] = []  # per tick: actions, games, seats, scores
    finals: dict[int, tuple[list[int], list[float]]] = {}
    while playing.any():
        actions = env.heuristic_actions(playing)
        actions[~playing] = env.random_actions(~playing)[~playing]
        idx = np.flatnonzero(playing)
        obs_rows.extend(env.obs[idx])
        mask_rows.extend(env.mask[idx])
        rows.append((actions[idx], number[idx], env.player[idx], scores[idx]))
        env.step(actions)
        scores += env.score_gains()[:, :num_players]
        for i in np.flatnonzero(env.done & playing).tolist():
            outcome = env.rewards[i, :num_players]
            winners = [p for p in range(num_players) if outcome[p] == outcome.max()]
            finals[int(number[i])] = (scores[i].tolist(), win_loss_returns(num_players, winners))
            scores[i] = 0
            if began[i] < share[i]:
                began[i] += 1
                number[i], next_number = next_number, next_number + 1
            else:
                playing[i] = False
    actions, numbers, seats, at = (np.concatenate([r[k] for r in rows]) for k in range(4))
    owners = list(zip(numbers.tolist(), seats.tolist(), at.tolist(), strict=True))
    ordered = [finals[g] for g in range(games)]  # every game begun (numbers 0..games-1) has ended
    return {
        "actions": actions.astype(np.int64),
        "returns": _returns(owners, ordered, reward_win, reward_vp, reward_vp_relative),
        "games": numbers,
        "seats": seats.astype(np.int64),
    }


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
    import torch

    start = time.monotonic()
    pre = cfg.pretrain
    weights = pre.table_weights(cfg.tables)
    total = sum(weights.values())
    processes = max(1 + cfg.train.workers, cfg.train.torch_threads)  # the run's share of the cores
    reward = (cfg.reward.win, cfg.reward.vp, cfg.reward.vp_relative)
    batched = in_core(pre.teacher)
    jobs = []  # (players, options, games, seed, teacher, *reward): each table size's games (split)
    for n in TABLE_SIZES:
        games = round(pre.games * weights[n] / total)
        seed = cfg.seed * 100_003 + 50_000 + 1000 * n
        if batched and games:
            jobs.append((n, dict(cfg.env.options), games, seed, pre.teacher, *reward))
            continue
        for chunk in split(games, processes):  # game g of the table dealt from seed + g, as in one part
            jobs.append((n, dict(cfg.env.options), len(chunk), seed + chunk.start, pre.teacher, *reward))
    where = f"{processes} thread(s) of the C++ core" if batched else f"{processes} process(es)"
    print(
        f"imitation: playing {sum(j[2] for j in jobs)} games of {pre.teacher} "
        f"at tables {sorted({j[0] for j in jobs})} in {where}",
        flush=True,
    )
    if batched:  # every table's observations gathered in one set of blocks, joined once
        obs, masks = demonstration_rows()
        parts = [play_core_demonstrations(*job[:4], *reward, processes, obs, masks) for job in jobs]
        data = {"obs": obs.join(), "masks": masks.join()}
    else:
        parts = starmap(collect_demonstrations, jobs, processes)
        data = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "masks")}
    data.update({k: np.concatenate([p[k] for p in parts]) for k in ("actions", "returns")})
    threads = torch.get_num_threads()
    torch.set_num_threads(min(processes, os.cpu_count() or 1))  # more threads than cores: far slower
    try:
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
    finally:
        torch.set_num_threads(threads)
    report["games"] = sum(j[2] for j in jobs)
    report["seconds"] = time.monotonic() - start
    return report
