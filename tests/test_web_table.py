"""The web app's table for a person: undo, what the table tells between turns (the recap, the
prisons' lines, the bar's notes, warnings before a move that loses something), named bot levels,
seat names, the end screen, the leaderboard's overall ranking and the chances' bands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from island_fortress_env.engine import actions as A
from island_fortress_env.env.records import save
from tests.web_client import (
    error,
    heuristic_record,
    live_game,
    play_through,
    start,
    unchanged,
    wait,
)

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINT = ROOT / "checkpoints" / "policy-2-4p-v3.zip"  # the shipped policy: the levels' Strong
STRONG = "threshold:0.05:policy-2-4p-v3"  # the Strong level: the shipped policy in its default play mode


# --------------------------------------------------------------------------- undo


def same_position(a, b) -> None:
    """Two states are the same game: the same events, choices, scores and every seat's
    observation now, and the same game after it when both are played on alike (the generator
    and the deck included)."""
    import random

    import numpy as np

    from island_fortress_env.env.observation import ObservationEncoder

    encoder = ObservationEncoder(a.game)
    a, b = a.clone(), b.clone()
    draw = random.Random(0)
    for _ in range(100_000):
        assert list(a.log) == list(b.log) and a.legal_actions() == b.legal_actions()
        assert list(a.score) == list(b.score)
        for seat in range(a.n):
            assert np.array_equal(encoder.encode(a, seat), encoder.encode(b, seat))
        if a.is_terminal():
            return
        action = draw.choice(a.legal_actions())
        a.apply_action(action)
        b.apply_action(action)


def test_undo_replays_the_game_without_the_last_decision(client):
    """The person's last decision is taken back by replaying the record without it: the state
    afterwards is the state of a fresh replay of the actions before it, and the game goes on."""
    from island_fortress_env.env.records import initial_state

    snap = start(client, players=3, seat=0, seed=12, opponents=["heuristic", "random"])
    game_id, token = snap["id"], snap["token"]
    game = live_game(client, game_id)
    assert "can't" not in json.dumps(snap) and not snap["can_undo"]
    assert "no decision to undo" in error(
        client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409
    )
    draw = __import__("random").Random(12)
    checked = 0
    while checked < 3:
        if snap["waiting"]:
            before = list(game.actions)
            choice = draw.choice(snap["view"]["choices"])["action"]
            snap = client.post(f"/api/games/{game_id}/act", json={"token": token, "action": choice}).json()
            # nobody else has moved since: undo is offered unless the move showed something hidden
            assert snap["can_undo"] is ("undo_refused" not in snap)
            if not snap["can_undo"] or draw.random() < 0.5:
                continue
            undone = client.post(f"/api/games/{game_id}/undo", json={"token": token})
            assert undone.status_code == 200, undone.text
            undone = undone.json()
            step = undone["undone"]
            assert step == len(before) and game.actions == before and undone["step"] == step
            assert undone["waiting"] and undone["generation"] == checked + 1
            assert len(undone["moves"]) == step and [m["step"] for m in undone["moves"]] == list(range(step))
            fresh = initial_state(game.rules, game.seed)
            for action in before:
                fresh.apply_action(action)
            same_position(game.state, fresh)
            assert len(game.history) == step + 1
            same_position(game.history[-1], fresh)
            checked += 1
            snap = undone
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token}).json()
    # Once another seat has moved, the decision is the table's: undo is refused, nothing changes.
    while not (snap["waiting"] and not snap["can_undo"] and any(m.seat != 0 for m in game.moves[-3:])):
        if snap["waiting"]:
            snap = client.post(
                f"/api/games/{game_id}/act",
                json={"token": token, "action": snap["view"]["choices"][0]["action"]},
            ).json()
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token}).json()
    before = client.get(f"/api/games/{game_id}", params={"token": token}).json()
    assert "has moved since your last decision" in error(
        client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409
    )
    unchanged(client, {**snap, "token": token}, before)


def test_undo_is_refused_where_there_is_nothing_of_yours_to_take_back(client):
    watch = client.post("/api/watch", json={"agents": ["random", "random"], "seed": 1}).json()
    assert "agents play every seat" in error(
        client.post(f"/api/games/{watch['id']}/undo", json={"token": watch["token"]}), 403
    )
    assert "token" in error(client.post(f"/api/games/{watch['id']}/undo", json={"token": "x"}), 403)
    last = play_through(client, players=2, seat=0, seed=3)
    game_id = last["id"]
    token = live_game(client, game_id).token
    assert not last["can_undo"]
    assert "game is over" in error(client.post(f"/api/games/{game_id}/undo", json={"token": token}), 409)


def test_a_game_link_without_its_token_finds_the_replay_once_over(client):
    """``/api/games/ID/public``: what anyone with the link may know (another tab, another
    browser): the kind of game, whether it is over and its saved record; nothing of the table."""
    snap = start(client, seat=0)
    public = client.get(f"/api/games/{snap['id']}/public").json()
    assert public == {"id": snap["id"], "kind": "play", "over": False, "record": None}
    last = play_through(client, players=2, seat=1, seed=4)
    done = client.get(f"/api/games/{last['id']}/public").json()
    assert done["over"] and done["record"] == last["record"]
    assert "no game" in error(client.get("/api/games/nope/public"), 404)


# --------------------------------------------------------------------------- what the table tells


def test_the_recap_tells_the_other_seats_turns_and_every_score_change(client):
    """At each of the person's decisions the recap holds the moves since their last turn: the
    other seats' turns in words with the cells they changed, and every score change with its
    reason from the typed events, adding up to the scores' change."""
    seen = {"recaps": 0, "scores": 0}

    def check(snap, game):
        recap = snap.get("recap")
        if not snap["waiting"] or recap is None:
            return
        seen["recaps"] += 1
        moves = game.moves[recap["from"] : recap["to"]]
        assert moves and all(m.seat != game.seat for m in moves)
        assert [t["seat"] for t in recap["turns"]] == [
            m.seat for i, m in enumerate(moves) if i == 0 or moves[i - 1].seat != m.seat
        ]
        assert all(t["lines"] for t in recap["turns"])
        gained = [a - b for a, b in zip(recap["after"], recap["before"], strict=True)]
        by_seat = [sum(s["points"] for s in recap["scores"] if s["seat"] == p) for p in range(len(gained))]
        assert by_seat == gained
        for change in recap["scores"]:
            assert change["why"].startswith(("for ", "from ")) and change["category"] and change["reason"]
            seen["scores"] += 1

    play_through(client, players=3, seat=2, seed=5, opponents=["heuristic", "heuristic"], check=check)
    assert seen["recaps"] > 20 and seen["scores"] > 3


def test_the_prisons_gifts_are_told_after_each_petition(client):
    said = []

    def check(snap, game):
        for move in snap.get("moves", []):
            said.extend(line["text"] for line in move["lines"])

    play_through(client, players=2, seat=0, seed=6, opponents=["heuristic"], check=check)
    petitions = [i for i, text in enumerate(said) if text.startswith("Bids revealed:")]
    assert len(petitions) >= 3
    for i in petitions:
        after = next(t for t in said[i + 1 : i + 4] if t.startswith("After the petition"))
        assert re.fullmatch(
            r"After the petition, 1 Jade and 1 Convict from the supply go to the prison of region \d, "
            r"where the winner's Taskmaster is; it holds \d+ Jade and \d+ Convicts? now\.",
            after,
        )
    assert any(
        re.match(
            r"1 Convict from the supply goes to the prison of region \d \((Recruiter|Planner|Builder) A\)", t
        )
        for t in said
    )


def test_the_bid_says_what_winning_gives_and_that_only_the_winner_pays(client):
    snap = start(client, players=2, seat=0, seed=2)
    game = live_game(client, snap["id"])
    while snap["view"]["decision"] != "petition bid" or not snap["waiting"]:
        path = "act" if snap["waiting"] else "advance"
        body = {"token": snap["token"]}
        if snap["waiting"]:
            body["action"] = snap["view"]["choices"][0]["action"]
        snap = {**client.post(f"/api/games/{game.id}/{path}", json=body).json(), "token": snap["token"]}
    note = " ".join(snap["notes"])
    assert "Only the winner pays the bid; everyone else keeps their Jade." in note
    assert "the Governor marker" in note and "a Governor block" in note and "first turn" in note


def test_build_one_or_two_blocks_says_why_two_is_not_offered():
    from island_fortress_env.engine import Game
    from island_fortress_env.engine.decisions import Decision
    from island_fortress_env.web.words import decision_notes

    reasons = set()
    for seed in range(40):
        state = Game(num_players=2).new_initial_state(seed)
        draw = __import__("random").Random(seed)
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.decision == Decision.BUILD_COUNT:
                notes = [n for n in decision_notes(state, state.current_player()) if n.startswith("Build 2")]
                assert bool(notes) == (A.BUILD_COUNT + 1 not in legal)
                if notes:
                    p = state.current_player()
                    if "Wall Blocks in your supply" in notes[0]:
                        assert state.blocks[p] < 2 and f"you have {state.blocks[p]}" in notes[0]
                        reasons.add("blocks")
                    elif "Jade" in notes[0]:
                        assert state.jade[p] < 3
                        reasons.add("jade")
                    else:
                        reasons.add("workers or room")
            state.apply_action(draw.choice(legal))
    assert {"blocks", "workers or room"} <= reasons


def test_a_move_that_loses_the_governor_block_or_ends_the_game_is_warned():
    """The choices that lose the Governor block (ending the holder's third turn with it), take
    nothing (Collect from Prison at an empty prison) or end the game carry a warning; no other
    choice does."""
    from island_fortress_env.engine import Game
    from island_fortress_env.web.words import consequences

    lost = ended = empty = 0
    for seed in range(12):
        state = Game(num_players=3).new_initial_state(seed)
        draw = __import__("random").Random(seed)
        while not state.is_terminal():
            seat = state.current_player()
            warned = consequences(state, seat, ("a", "b", "c"))
            for action in state.legal_actions():
                after = state.clone()
                after.apply_action(action)
                while (
                    not after.is_terminal()
                    and after.current_player() == seat
                    and len(after.legal_actions()) == 1
                ):
                    after.apply_action(after.legal_actions()[0])
                new = after.log[len(state.log) :]
                loses = any(type(e).__name__ == "GovernorLost" and e.player == seat for e in new)
                ends = after.is_terminal()
                nothing = any(
                    type(e).__name__ == "PrisonCollected" and e.player == seat and not (e.jade or e.convicts)
                    for e in new
                )
                assert (action in warned) == (loses or ends or nothing), (action, warned)
                if nothing:
                    assert "This takes nothing: the prison of region" in warned[action]
                    empty += 1
                if loses:
                    assert "goes back to the box" in warned[action]
                    lost += 1
                if ends:
                    assert "This ends the game: the final scores would be " in warned[action]
                    assert ", ".join(f"{'ABC'[p]} {s}" for p, s in enumerate(after.score)) in warned[action]
                    ended += 1
            # never the Governor block, so that holders lose it
            legal = [
                a for a in state.legal_actions() if a not in A.ACTION_FAMILIES[13]
            ] or state.legal_actions()
            state.apply_action(draw.choice(legal))
    assert lost > 0 and ended > 0 and empty > 0


# --------------------------------------------------------------------------- levels, names, leaderboard


def test_the_setup_offers_named_bot_levels_with_their_ladder_ratings(client):
    config = client.get("/api/config").json()
    levels = {entry["level"]: entry for entry in config["levels"]}
    assert levels["Beginner"]["spec"] == "random" and levels["Casual"]["spec"] == "heuristic"
    assert levels["Casual"]["rating"]["ordinal"] == 6.3
    if CHECKPOINT.is_file():
        assert levels["Strong"]["label"] == STRONG and levels["Strong"]["rating"]["ordinal"] == 42.8
        assert levels["Master"]["spec"] == "search:64" and levels["Master"]["rating"]["ordinal"] == 50.1
        snap = start(client, players=2, seat=0, opponents=[levels["Strong"]["spec"]])
        assert snap["names"] == ["you", "Strong bot"]  # the level's name, not its spec
    assert config["rollouts"]["random"] >= 200 and config["rollouts"]["heuristic"] >= 48


def test_the_ladder_ratings_are_the_ones_docs_strength_md_shows():
    from island_fortress_env.players import parse_agent_spec
    from island_fortress_env.players.specs import SHIPPED_POLICY
    from island_fortress_env.web.levels import LADDER

    text = (ROOT / "docs" / "STRENGTH.md").read_text("utf-8")
    section = text[text.index("## The ladder") :]
    end = section.find("\n#", 1)  # the next heading, if any
    table = section if end < 0 else section[:end]
    rows = re.findall(
        r"^\| \d+ \| `([^`]+)`[^|]*\| (-?[\d.]+) \| (-?[\d.]+) \+- ([\d.]+) \|", table, re.MULTILINE
    )
    assert len(rows) == len(LADDER)
    searched = f"search:checkpoints/{SHIPPED_POLICY.name}:64"  # the app's search:64
    for spec, ordinal, mu, sigma in rows:
        label = "search:64" if spec == searched else parse_agent_spec(spec).label
        rating = LADDER[label]
        assert (rating.ordinal, rating.mu, rating.sigma) == (float(ordinal), float(mu), float(sigma))


@pytest.mark.skipif(not CHECKPOINT.is_file(), reason="the shipped policy is not in this checkout")
def test_the_strong_level_is_the_shipped_policy_thresholded_reading_the_file_the_server_names():
    from island_fortress_env.players import AgentKind, parse_agent_spec
    from island_fortress_env.players.specs import SHIPPED_POLICY, SHIPPED_POLICY_THRESHOLD
    from island_fortress_env.web.levels import named_levels

    for agents, path in [((), None), (["random", str(SHIPPED_POLICY)], str(SHIPPED_POLICY))]:
        strong = {level.name: level for level in named_levels(agents)}["Strong"]
        parsed = parse_agent_spec(strong.spec)
        assert parsed.kind is AgentKind.THRESHOLD and parsed.threshold == SHIPPED_POLICY_THRESHOLD
        assert parsed.path is not None and parsed.path.resolve() == SHIPPED_POLICY.resolve()
        assert path is None or strong.spec == f"threshold:{SHIPPED_POLICY_THRESHOLD:g}:{path}"


def test_seats_are_named_alike_on_the_play_page_and_in_its_replay(client, tmp_path):
    last = play_through(client, players=2, seat=1, seed=9, opponents=["heuristic"])
    assert last["names"] == ["Casual bot", "you"]  # a bot level by its name, not its spec
    replay = client.get(f"/api/records/{last['record']}").json()
    assert replay["agents"] == last["names"]
    assert [
        p["name"] for p in client.get(f"/api/records/{last['record']}/steps/3").json()["view"]["players"]
    ] == [
        "Casual bot",
        "you",
    ]
    listed = client.get("/api/records").json()["records"]
    assert listed[0]["agents"] == ["Casual bot", "you"]


def test_the_end_screen_comes_with_the_end_only(client):
    def check(snap, game):
        assert ("end" in snap) == game.over

    last = play_through(client, players=3, seat=0, seed=10, check=check)
    end = last["end"]
    assert [row["total"] for row in end["rows"]] == [p["score"] for p in last["view"]["players"]]
    for row in end["rows"]:
        assert sum(row["points"]) == row["total"]
        assert row["winner"] == (row["seat"] in end["winners"])
    assert end["categories"] and set(end["categories"]) <= set(
        __import__("island_fortress_env.web.recap", fromlist=["CATEGORIES"]).CATEGORIES
    )


def test_the_leaderboard_ranks_every_agent_over_all_results(client, tmp_path):
    from tests.web_client import evaluation_result

    games = tmp_path / "games"
    two = evaluation_result(2, [("heuristic", 40, 38, 40.2), ("random", 40, 2, 9.5)])
    three = evaluation_result(
        3, [("random", 30, 2, 8.1), ("heuristic", 30, 27, 35.0), ("mcts:50", 30, 1, 7.9)]
    )
    (games / "eval-2p.json").write_text(json.dumps(two))
    (games / "eval-3p.json").write_text(json.dumps(three))
    board = client.get("/api/leaderboard").json()
    overall = board["overall"]
    assert [row["spec"] for row in overall] == ["heuristic", "random", "mcts:50"]
    assert [r["rank"] for r in overall] == [1, 2, 3]
    heuristic = overall[0]
    tables = [a for t in board["tables"] for a in t["agents"] if a["spec"] == "heuristic"]
    assert heuristic["games"] == sum(a["games"] for a in tables) and heuristic["tables"] == 2
    assert heuristic["players"] == [2, 3]
    expected = sum(
        a["games"] / t["players"] for t in board["tables"] for a in t["agents"] if a["spec"] == "heuristic"
    )
    assert heuristic["vs_chance"] == pytest.approx(heuristic["wins"] / expected)
    assert heuristic["ci95"][0] <= heuristic["win_rate"] <= heuristic["ci95"][1]


def test_chances_come_with_their_band_and_count(client, tmp_path):
    from island_fortress_env.stats import wilson

    record = heuristic_record(players=2, seed=3)
    save(record, tmp_path / "games" / "game.json")
    body = {"steps": [0, 30, len(record.actions)], "playout": "random", "rollouts": 40}
    result = wait(client, client.post("/api/records/game.json/analysis", json=body).json())
    assert "the band is the 95% Wilson interval" in result["method"]
    for point in result["points"]:
        for c, low, high in zip(point["chances"], point["low"], point["high"], strict=True):
            assert low <= c <= high
        if point["step"] < len(record.actions):
            assert point["rollouts"] == 40 and point["high"][0] - point["low"][0] > 0.1
        else:
            assert point["rollouts"] == 0 and point["low"] == point["high"] == point["chances"]
    low, high = wilson(0.5, 256)
    assert 0.43 < low < 0.44 and 0.56 < high < 0.57


def test_an_advance_returns_the_moves_made_once_its_time_is_up(client, monkeypatch):
    """A slow bot's moves come to the page as they are made: an advance request stops after
    ``ADVANCE_SECONDS`` (with at least one move), and the next one goes on."""
    from island_fortress_env.web import games

    monkeypatch.setattr(games, "ADVANCE_SECONDS", 0.0)
    snap = start(client, players=3, seat=2, seed=4)
    moved = client.post(f"/api/games/{snap['id']}/advance", json={"token": snap["token"], "moves": 50}).json()
    assert len(moved["moves"]) == 1 and moved["step"] == 1


@pytest.mark.skipif(not CHECKPOINT.is_file(), reason="the shipped checkpoint is not in this checkout")
def test_a_search_level_plays_a_seat(client):
    pytest.importorskip("torch", reason="the search levels need torch")
    levels = {entry["level"]: entry["spec"] for entry in client.get("/api/config").json()["levels"]}
    snap = start(client, players=2, seat=1, opponents=[levels["Expert"]], seed=3)
    assert snap["names"] == ["Expert bot", "you"] and not snap["waiting"]
    moved = client.post(f"/api/games/{snap['id']}/advance", json={"token": snap["token"], "moves": 3}).json()
    assert moved["moves"] and all(m["seat"] == 0 for m in moved["moves"])


# --------------------------------------------------------------------------- the table's second pass


def test_the_scores_if_the_game_ended_now_are_the_engines_own_end_scoring():
    """``score_if_ended`` on the C++ core's state equals the Python engine ending the same game
    now (its ``_end_game``, as a game ends), at every tenth step of seeded games; right before the
    last move of a game that ends at a round's end it names the final scores."""
    import random

    from island_fortress_env.env.aec import raw_env
    from island_fortress_env.views.seatview import score_if_ended

    compared = 0
    for players, seed in ((2, 1), (3, 2), (4, 3)):
        core, python = (raw_env(num_players=players, backend=b) for b in ("core", "python"))
        core.reset(seed=seed)
        python.reset(seed=seed)
        a, b = core.game_state, python.game_state
        draw = random.Random(seed)
        step = 0
        while not a.is_terminal():
            if step % 10 == 0:
                projected = score_if_ended(a)
                ended = b.clone()
                ended._end_game()
                assert [r["total"] for r in projected["rows"]] == list(ended.score)
                assert projected["winners"] == list(ended.winners)
                assert [r["now"] + sum(r["points"]) for r in projected["rows"]] == list(ended.score)
                compared += 1
            action = draw.choice(a.legal_actions())
            a.apply_action(action)
            b.apply_action(action)
            step += 1
        assert score_if_ended(a) is None
    assert compared > 50


def test_a_card_of_the_hand_is_complete_exactly_when_the_engine_lets_it_be_played():
    """``need`` 0 for the cards whose pattern the engine finds on the seat's unreinforced blocks,
    and otherwise as many empty cells as ``cells`` names, at a place on the wall."""
    import random

    from island_fortress_env.engine import Game
    from island_fortress_env.views.seatview import hand_progress

    seen = {"complete": 0, "needed": 0, "no room": 0}
    for seed in range(4):
        state = Game(num_players=3).new_initial_state(seed)
        draw = random.Random(seed)
        while not state.is_terminal():
            for seat in range(state.n):
                playable = state.game.playable_cards(state.favor_hand[seat], state.own[seat] & ~state.reinf)
                for card in hand_progress(state, seat):
                    assert (card["need"] == 0) == bool(playable >> card["id"] & 1)
                    if card["need"] is None:
                        seen["no room"] += 1
                    elif card["need"]:
                        seen["needed"] += 1
                        assert len(card["cells"]) == card["need"]
                        bits = [state.geo.cell_bits[c] for c in card["cells"]]
                        assert not any(state.occ >> b & 1 for b in bits)  # cells still empty
                    else:
                        seen["complete"] += 1
                    assert "counts once you play the card" in card["when"]
            state.apply_action(draw.choice(state.legal_actions()))
    assert all(seen.values()), seen


def test_the_end_of_a_turn_waits_for_the_persons_confirmation_with_undo_open(client):
    """After a decision another seat answers next, the snapshot carries ``handover`` (what ends,
    who plays next) while undo is open; taking it back works there, whatever the pause; a move
    that cannot be undone (a draw, the bids revealed) asks nothing."""
    import random

    snap = start(client, players=2, seat=0, opponents=["random"], seed=21)
    token, game_id = snap["token"], snap["id"]
    draw = random.Random(21)
    asked = ended = undone = 0
    for _ in range(3000):
        if snap["over"]:
            break
        if "handover" in snap:
            asked += 1
            assert snap["can_undo"] and not snap["waiting"]
            assert "plays next; until then Undo takes it back." in snap["handover"]
            ended += "of 3 ends here." in snap["handover"]
            if draw.random() < 0.3:
                snap = client.post(f"/api/games/{game_id}/undo", json={"token": token}).json()
                assert snap["waiting"] and "handover" not in snap
                undone += 1
                continue
        if snap["waiting"]:
            choice = draw.choice(snap["view"]["choices"])
            snap = client.post(
                f"/api/games/{game_id}/act", json={"token": token, "action": choice["action"]}
            ).json()
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token, "moves": 40}).json()
    assert snap["over"] and asked > 20 and ended > 5 and undone > 3, (asked, ended, undone)


def test_a_forced_single_build_count_says_why_and_own_kept_cards_are_told(client):
    """The person's one-choice "Build 1 block" carries why 2 are not offered (the bar's note);
    the person's own setup keeps are marked ``private`` so the log names each kept card."""
    whys, private = [], []
    for seed in (1, 2, 3):
        last = play_through(client, 2, 0, seed, opponents=["random"])
        assert last["over"]
        for move in live_game(client, last["id"]).moves_for(0):
            if move["seat"] == 0 and move.get("why"):
                assert move["auto"]
                whys.append(move["why"])
            if move["seat"] == 0 and move.get("private"):
                private.append(move["text"])
    assert whys and all(w.startswith("Build 2 blocks is not offered: ") for w in whys), whys
    assert sum(t.startswith("Keep ") for t in private) >= 9, private  # 3 kept at each deal


def test_the_snapshot_says_where_the_person_stands_and_carries_the_guide(client):
    snap = start(client, players=3, seat=0, opponents=["random", "random"], seed=4)
    assert snap["stage"] == "the deal"
    assert "dealt 5 favor cards and keep 3" in snap["guide"]["deal"]
    assert "reward counts only once you play it" in snap["guide"]["favors"]
    token, game_id = snap["token"], snap["id"]
    stages = set()
    for _ in range(400):
        if snap["over"]:
            break
        if snap["waiting"]:
            stages.add(snap["stage"].split(":")[0])
            kinds = {c["kind"] for c in snap["view"]["choices"]}
            if "bid" in kinds:
                assert snap["stage"].startswith("the petition of round ")
            if "role" in kinds:
                assert re.fullmatch(r"your turn [123] of 3", snap["stage"])
            snap = client.post(
                f"/api/games/{game_id}/act",
                json={"token": token, "action": snap["view"]["choices"][0]["action"]},
            ).json()
        else:
            snap = client.post(f"/api/games/{game_id}/advance", json={"token": token, "moves": 40}).json()
        assert ("guide" in snap) == (snap["step"] == len(snap["moves"]))  # answers from the start only
    assert {"the deal", "the petition of round 1", "your turn 1 of 3", "your turn 3 of 3"} <= stages, stages


def test_an_unknown_page_is_a_page_saying_so_and_the_api_stays_json(client):
    page = client.get("/no/such/<page>")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "There is no page here" in page.text and "&lt;page&gt;" in page.text and "<page>" not in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    api = client.get("/api/no/such/thing")
    assert api.status_code == 404 and api.json() == {"error": "Not Found"}
