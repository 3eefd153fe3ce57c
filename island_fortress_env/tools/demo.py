"""A demo game through the public PettingZoo API, rendered as text after every round."""

from __future__ import annotations

from island_fortress_env.engine.describe import event_to_string
from island_fortress_env.engine.events import EventKind
from island_fortress_env.env.aec import env as make_env
from island_fortress_env.players import make_agent

_SHOWN = frozenset(
    (
        EventKind.PETITION,
        EventKind.ROLE,
        EventKind.SCORE,
        EventKind.WALL_COMPLETE,
        EventKind.GOVERNOR_LOST,
        EventKind.GAME_OVER,
    )
)


def run_demo(
    players: int = 3, seed: int = 7, agents: list[str] | None = None, verbose: bool = False
) -> list[int]:
    specs = agents or ["heuristic"] * players
    if len(specs) != players:
        raise ValueError(f"agents: one per seat ({players}) is needed, got {len(specs)}")
    env = make_env(num_players=players, render_mode="ansi")
    env.reset(seed=seed)
    raw = env.unwrapped
    seats = {
        a: make_agent(spec, seed + i)
        for i, (a, spec) in enumerate(zip(env.possible_agents, specs, strict=True))
    }
    for i, a in enumerate(env.possible_agents):
        print(f"{a} ({'ABCD'[i]}): {seats[a].name}")
    last_round, shown = 0, 0
    for agent in env.agent_iter():
        obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        state = raw.game_state
        if state.round != last_round:
            if last_round:
                print(env.render())
            last_round = state.round
            print(f"\n===== Round {state.round} =====")
        policy = seats[agent]
        action = policy.act(obs["observation"], obs["action_mask"], state)
        if verbose:
            print(f"  {agent}: {raw.action_to_string(action)}")
        env.step(action)
        for event in raw.game_state.log[shown:]:
            if event.kind in _SHOWN:
                print("  " + event_to_string(event))
        shown = len(raw.game_state.log)
    print()
    print(env.render())
    state = raw.game_state
    print("\nFinal scores:", {a: state.score[i] for i, a in enumerate(env.possible_agents)})
    print("Winner(s):", [env.possible_agents[w] for w in state.winners])
    env.close()
    return state.score
