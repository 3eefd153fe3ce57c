"""The page in a real browser (headless Chromium): a whole game against bots played by clicking
on the table and in the action bar (with undo, confirmations and the end screen), the table at
three window sizes, agents watched, links opened in another tab, a record replayed forward and
back, an analysis drawn with its band, the leaderboard. Screenshots are taken on the way into the
folder conftest names (printed at the end of the run)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from island_fortress_env.env.records import load

pytest.importorskip("selenium", reason="Selenium is missing (the [browser] extra)")

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.conftest import LONG_NAME, set_viewport

WAIT = 60  # seconds a page may take to show what a step expects (a bound, not a measurement)

# What the person may click: marked cells (orange: build; violet: the Governor block), camps and
# prisons, favor cards, role cards, the bar's choices; each with its kind (found here, in one
# round trip: asking the driver for each attribute would take longer than the game).
CLICKABLE = """
const picked = document.querySelector("svg.board .picked");
const kind = (el) => {
  if (el.dataset.cell !== undefined) return el.classList.contains("gov-target") ? "governor cell" : "cell";
  if (el.dataset.prison !== undefined) return "prison";
  if (el.dataset.region !== undefined) return "camp";
  if (el.dataset.card !== undefined) return "favor card";
  if (el.dataset.role !== undefined) return "role card";
  if (el.id === "seal-bid") return "bid";
  if (el.classList.contains("warned")) return "warned";
  return el.closest("#menu") ? "menu" : "button";
};
return [...document.querySelectorAll(
  "svg.board .target, svg.board .gov-target, .favor.target, .role.target, "
  + "#decision button.choice[data-action]"
)].filter((el) => {
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && !el.closest("details:not([open])") && el !== picked;
}).map((el) => ({ el, kind: kind(el) }));
"""
# Whether an element lies wholly inside the window (1 px of rounding allowed).
INSIDE = """
const el = document.querySelector(arguments[0]);
if (!el) return null;
const box = el.getBoundingClientRect();
return box.width > 0 && box.top >= -1 && box.left >= -1 && box.bottom <= window.innerHeight + 1
  && box.right <= window.innerWidth + 1;
"""


def waiter(driver) -> WebDriverWait:
    """Waits that look every 50 ms (a game is hundreds of them) and look again when the page is
    redrawn or left under an element they were reading."""
    return WebDriverWait(
        driver, WAIT, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
    )


# One look at the page at a decision of the person's (one round trip instead of ten).
PROBE = """
const q = (css) => document.querySelector(css);
const inside = (el) => {
  if (!el) return null;
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.top >= -1 && box.left >= -1 && box.bottom <= window.innerHeight + 1
    && box.right <= window.innerWidth + 1;
};
const colours = {};
for (const kind of ["target", "gov-target"]) {
  const rect = q(`svg.board rect.${kind}`);
  if (rect) colours[kind] = getComputedStyle(rect).stroke;
}
const note = q("#decision .note");
return {
  step: document.body.dataset.step, bar: inside(q("#bar")), hand: inside(q("#my-hand")),
  favors: q("#bar-favors") ? inside(q("#bar-favors")) && inside(q("#bar-favors .favor")) : null,
  recent: !!q("svg.board [data-recent]"), undo: !!q("#undo:enabled"), bid: !!q("#seal-bid"),
  note: note ? note.textContent : "", colours,
};
"""


def body_data(driver, key: str) -> str | None:
    return driver.execute_script(f"return document.body.dataset.{key} || null;")


def decision_title(driver) -> str:
    return driver.execute_script(
        "const t = document.querySelector('#decision h3'); return t ? t.textContent : '';"
    )


def inside(driver, css: str) -> bool | None:
    return driver.execute_script(INSIDE, css)


END_TURN = "End your turn?"  # the bar asks before the bots answer a decision of yours


def confirm_turn_end(driver) -> bool:
    """Confirm the end of the turn when the bar asks (the bots then play); whether it asked."""
    if decision_title(driver) != END_TURN:
        return False
    driver.find_element(By.ID, "end-turn").click()
    return True


def start_game(driver, server, players: int, opponent: str, seed: int) -> None:
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "start-play"))
    driver.execute_script("localStorage.setItem('if-guide-seen', '1');")  # the first-game guide: seen
    Select(driver.find_element(By.ID, "play-players")).select_by_value(str(players))
    for select in driver.find_elements(By.CSS_SELECTOR, "#play-opponents select"):
        Select(select).select_by_value(opponent)
    driver.find_element(By.ID, "play-seed").send_keys(str(seed))
    driver.find_element(By.ID, "start-play").click()
    wait.until(lambda d: "/play/" in d.current_url and d.find_elements(By.ID, "pause"))


def set_range(driver, element_id: str, value) -> None:
    driver.execute_script(
        "const p = document.getElementById(arguments[0]); p.value = arguments[1];"
        "p.dispatchEvent(new Event('input'));",
        element_id,
        value,
    )


def test_a_whole_game_against_bots_played_in_the_bar(server, driver, shots, games_dir):
    """Every kind of click, undo, a confirmation asked (and answered both ways), the action
    bar and your hand in the window at every decision, the recap's marks on the board, the
    Governor block's violet cells, and the end screen with every hand, rematch and analyse."""
    set_viewport(driver, 1400, 857)
    start_game(driver, server, 2, "random", 17)
    wait = waiter(driver)
    set_range(driver, "pause", 0)
    draw = random.Random(17)
    clicked: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    colours = {}
    for _ in range(3000):
        wait.until(lambda d: decision_title(d) in ("Your move", "Game over", END_TURN))
        if confirm_turn_end(driver):
            seen["turn ends confirmed"] += 1
            wait.until(lambda d: decision_title(d) != END_TURN)
            continue
        if decision_title(driver) == "Game over":
            break
        probe = driver.execute_script(PROBE)
        assert probe["bar"] and probe["hand"], "the bar or your hand is off screen"
        if probe["favors"] is not None:
            assert probe["favors"], "the cards to keep are off screen"
            seen["setup cards in view"] += 1
        seen["recent blocks marked"] += probe["recent"]
        colours.update(probe["colours"])
        step = probe["step"]
        if probe["undo"] and clicked["undo"] < 3 and draw.random() < 0.25:
            driver.find_element(By.ID, "undo").click()
            wait.until(lambda d, step=step: int(body_data(d, "step") or 0) < int(step))
            clicked["undo"] += 1
            continue
        if probe["bid"]:
            assert "Only the winner pays the bid" in probe["note"]
            if draw.random() < 0.6:  # bid high, to win the Governor block now and then
                set_range(driver, "bid", driver.find_element(By.ID, "bid").get_attribute("max"))
        found = [(c["el"], c["kind"]) for c in driver.execute_script(CLICKABLE)]
        assert found, "the person's move offers nothing to click"
        warned = [c for c in found if c[1] == "warned"]
        menu = [c for c in found if c[1] == "menu"]
        candidates = [c for c in found if c[1] != "governor cell"] or found
        on_table = [c for c in candidates if c[1] not in ("button", "bid", "menu", "warned")]
        element, kind = (warned or [None])[0] or draw.choice(menu or on_table or candidates)
        if kind == "cell" and not clicked["cell"]:
            driver.save_screenshot(str(shots / "play-1400x857-building.png"))
        had_menu = bool(menu)
        had_pick = bool(driver.find_elements(By.CSS_SELECTOR, "svg.board .picked"))
        element.click()
        clicked[kind] += 1
        if kind == "warned":
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "dialog#confirm[open]"))
            if not seen["confirmation"]:
                driver.save_screenshot(str(shots / "play-1400x857-confirmation.png"))
            answer = "confirm-no" if not seen["cancelled"] else "confirm-yes"
            driver.find_element(By.ID, answer).click()
            seen["confirmation"] += 1
            if answer == "confirm-no":
                seen["cancelled"] += 1
                assert body_data(driver, "step") == step  # nothing was played
                continue
        # The move is played (the step moves on), or the click opened a menu of the choices on
        # that thing, or picked a first prison: a menu or a pick that was there before does not
        # count (the answer to a click in it is still on its way).
        wait.until(
            lambda d, step=step, had_menu=had_menu, had_pick=had_pick: (
                body_data(d, "step") != step
                or (not had_menu and d.find_elements(By.ID, "menu"))
                or (not had_pick and d.find_elements(By.CSS_SELECTOR, "svg.board .picked"))
            )
        )
        if seen["recent blocks marked"] == 1 and not seen["recap shot"]:
            driver.save_screenshot(str(shots / "play-1400x857-recap.png"))
            seen["recap shot"] += 1
    else:
        pytest.fail("the game did not end")
    assert {"cell", "favor card", "role card", "bid", "undo"} <= set(clicked), clicked
    assert seen["setup cards in view"] and seen["recent blocks marked"], seen
    assert seen["confirmation"] >= 2 and seen["cancelled"] == 1, (seen, clicked)
    if "gov-target" in colours:  # "build here" and "Governor block here" look different
        assert colours["gov-target"] != colours["target"], colours
    # The end screen: the score table by category, every hand revealed, what next.
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "dialog#end-dialog[open] #end-table"))
    driver.save_screenshot(str(shots / "play-1400x857-end.png"))
    rows = driver.find_elements(By.CSS_SELECTOR, "#end-table tr[data-seat]")
    assert len(rows) == 2
    assert len(driver.find_elements(By.CSS_SELECTOR, "#end-hands .end-hand")) == 2
    for button in ("rematch", "replay", "analyse"):
        assert driver.find_element(By.ID, button).is_enabled()
    finished = driver.current_url
    link = driver.find_element(By.ID, "record-link").get_attribute("textContent")
    record = load(games_dir / link)
    assert record.agents == ("human", "random") and record.seed == 17
    totals = [int(r.find_element(By.CSS_SELECTOR, "td.total").get_attribute("textContent")) for r in rows]
    assert totals == list(record.scores)
    shown = [int(el.text.split()[0]) for el in driver.find_elements(By.CSS_SELECTOR, ".player [data-score]")]
    assert shown == list(record.scores)
    log = driver.find_element(By.ID, "log").get_attribute("textContent")
    assert "Game over. Final scores:" in log and "VP = " in log
    if driver.find_elements(By.ID, "show-policy"):  # no suggestion once the game is over
        assert not driver.find_elements(By.CSS_SELECTOR, "#policy table")
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    # Rematch: the same seats, a new deal.
    driver.find_element(By.ID, "rematch").click()
    wait.until(lambda d: "/play/" in d.current_url and d.current_url != finished and decision_title(d))
    assert (
        driver.find_element(By.CSS_SELECTOR, ".player[data-seat='1'] header .name").text == "B Beginner bot"
    )
    # The finished game again, then its analysis.
    driver.get(finished)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "dialog#end-dialog[open] #analyse"))
    driver.find_element(By.ID, "analyse").click()
    wait.until(lambda d: "/replay/" in d.current_url and "Wilson" in d.find_element(By.ID, "method").text)


@pytest.mark.parametrize(("width", "height"), [(1400, 857), (1280, 720), (390, 844)])
def test_the_table_fits_the_window(server, driver, shots, width, height):
    """At a laptop's window, a small one and a phone's: the action bar, your hand and the setup
    cards are in the window, then every choice of the role choice; the log keeps its height."""
    set_viewport(driver, width, height)
    start_game(driver, server, 3, "heuristic", 5)
    wait = waiter(driver)
    set_range(driver, "pause", 0)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#bar-favors .favor.target"))
    for css in ("#bar", "#decision", "#my-hand", "#bar-favors", "#bar-favors .favor"):
        assert inside(driver, css), f"{css} is off screen at {width}x{height}"
    driver.save_screenshot(str(shots / f"table-{width}x{height}-setup.png"))
    for _ in range(40):
        wait.until(lambda d: decision_title(d) in ("Your move", END_TURN))
        if confirm_turn_end(driver):
            wait.until(lambda d: decision_title(d) != END_TURN)
            continue
        if driver.find_elements(By.CSS_SELECTOR, "#decision .role-cards"):
            break
        step = body_data(driver, "step")
        target = driver.find_elements(By.CSS_SELECTOR, "#bar-favors .favor.target, #seal-bid")
        target = target or driver.find_elements(By.CSS_SELECTOR, "#decision button.choice[data-action]")
        target[0].click()
        wait.until(lambda d, step=step: body_data(d, "step") != step)
    else:
        pytest.fail("no role choice came")
    for css in ("#bar", "#my-hand", "#decision .role-cards", "#refused"):
        assert inside(driver, css), f"{css} is off screen at {width}x{height}"
    if width >= 1280:  # every role action in view at once, and a tall log beside the table
        for button in driver.find_elements(By.CSS_SELECTOR, "#decision button.choice"):
            assert driver.execute_script(
                INSIDE.replace("document.querySelector(arguments[0])", "arguments[0]"), button
            )
        assert driver.find_element(By.ID, "log").size["height"] >= 150
    driver.save_screenshot(str(shots / f"table-{width}x{height}-roles.png"))
    set_viewport(driver, 1400, 857)


def replay_at(driver) -> int:
    step = body_data(driver, "step")
    return -1 if step is None else int(step)  # -1: the page is still drawing its first step


def test_a_record_replayed_forward_and_back(server, driver, shots, games_dir):
    set_viewport(driver, 1400, 857)
    record = load(games_dir / "fixture-game.json")
    total = len(record.actions)
    driver.get(server + "/replay/fixture-game.json?step=40")
    wait = waiter(driver)
    wait.until(
        lambda d: (
            d.find_elements(By.ID, "where")
            and d.find_element(By.ID, "where").text.startswith("decision 40 of")
        )
    )
    assert driver.find_element(By.ID, "where").text.startswith(f"decision 40 of {total}")

    def go(button: str, expect: int) -> None:
        driver.find_element(By.ID, button).click()
        wait.until(lambda d: replay_at(d) == expect)
        assert f"step={expect}" in driver.current_url
        assert f"step={expect}" in driver.find_element(By.ID, "share").get_attribute("value")

    go("next", 41)
    go("prev", 40)
    go("prev", 39)
    from island_fortress_env.env.records import states

    every = states(record)
    turns = [
        i
        for i in range(1, total + 1)
        if every[i].is_terminal()
        or every[i].current_player() != every[i - 1].current_player()
        or every[i].round != every[i - 1].round
    ]
    go("next-turn", next(t for t in turns if t > 39))
    go("prev-turn", max(t for t in [0, *turns] if t < replay_at(driver)))
    go("last", total)
    assert "Game over" in driver.find_element(By.CSS_SELECTOR, ".status").text
    filled_at_end = len(driver.find_elements(By.CSS_SELECTOR, "svg.board rect.cell[fill]"))
    go("first", 0)
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.board rect.cell[fill]")) == 0 < filled_at_end
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    wait.until(lambda d: replay_at(d) == 1)
    Select(driver.find_element(By.ID, "round")).select_by_value("3")
    first_of_round = next(i for i, s in enumerate(every) if s.round == 3)
    wait.until(lambda d: replay_at(d) == first_of_round)
    log = driver.find_element(By.ID, "log").get_attribute("textContent")
    assert "Round 3 begins" in log and "After the petition, 1 Jade and 1 Convict" in log
    assert inside(driver, "#bar") and inside(driver, "#next")
    driver.save_screenshot(str(shots / "replay.png"))
    # A shared link opens the replay at its step.
    link = driver.find_element(By.ID, "share").get_attribute("value")
    driver.get(link)
    wait.until(lambda d: d.find_elements(By.ID, "where") and replay_at(d) == first_of_round)


def test_a_replay_names_each_seat_apart_from_its_score(server, driver, shots):
    """The header of a seat named by a checkpoint's path shows the checkpoint's short name, and
    the name never runs into the score; the names are the play page's."""
    set_viewport(driver, 1400, 857)
    driver.get(server + "/replay/four-seats.json?step=200")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".player[data-seat='2'] header .name"))
    for seat in range(4):
        name = driver.find_element(By.CSS_SELECTOR, f".player[data-seat='{seat}'] header .name")
        score = driver.find_element(By.CSS_SELECTOR, f".player[data-seat='{seat}'] header .score")
        assert name.rect["x"] + name.rect["width"] <= score.rect["x"], "the name runs into the score"
    name = driver.find_element(By.CSS_SELECTOR, ".player[data-seat='2'] header .name").text
    assert name == "C policy-2-4p" and LONG_NAME not in driver.find_element(By.ID, "replay-seats").text
    driver.save_screenshot(str(shots / "replay-4-players.png"))


def test_a_missing_record_says_so_instead_of_loading_for_ever(server, driver):
    driver.get(server + "/replay/no-such-game.json")
    failure = waiter(driver).until(lambda d: d.find_elements(By.ID, "failure"))[0]
    assert "no record 'no-such-game.json' in the games directory" in failure.text
    assert "Loading" not in driver.find_element(By.ID, "app").text


def test_an_analysis_is_drawn_over_the_game_with_its_band(server, driver, shots):
    set_viewport(driver, 1400, 857)
    driver.get(server + "/replay/fixture-game.json?step=120")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "estimate") and body_data(d, "step") == "120")
    assert driver.find_element(By.ID, "log").size["height"] >= 300  # the analysis waits folded
    driver.find_element(By.CSS_SELECTOR, "#analysis summary").click()
    rollouts = driver.find_element(By.ID, "rollouts")
    assert rollouts.get_attribute("value") == "256"
    Select(driver.find_element(By.ID, "playout")).select_by_value("heuristic")
    assert rollouts.get_attribute("value") == "64"  # its own default, not a handful
    Select(driver.find_element(By.ID, "playout")).select_by_value("random")
    assert rollouts.get_attribute("value") == "256"
    rollouts.clear()
    rollouts.send_keys("16")
    driver.find_element(By.ID, "estimate").click()
    wait.until(
        lambda d: (
            "so far" not in d.find_element(By.ID, "method").text
            and "positions" in d.find_element(By.ID, "method").text
        )
    )
    method = driver.find_element(By.ID, "method").text
    assert method.startswith("16 random playouts per position, from the true position")
    assert "95% Wilson interval" in method
    assert len(driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart polyline")) == 3
    assert len(driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart polygon.band")) == 3
    assert "%" in driver.find_element(By.ID, "chances").text
    if driver.find_elements(By.ID, "show-policy"):
        driver.find_element(By.ID, "show-policy").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#policy table tr"))
    driver.save_screenshot(str(shots / "analysis.png"))


def test_agents_watched_and_links_opened_in_another_tab(server, driver, shots):
    """Play, pause and step; the watch link opened in another tab works there, and a finished
    game's link opened where its token is not known opens its replay."""
    set_viewport(driver, 1400, 857)
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "start-watch"))
    Select(driver.find_element(By.ID, "watch-players")).select_by_value("2")
    driver.find_element(By.ID, "start-watch").click()
    wait.until(lambda d: d.find_elements(By.ID, "play-pause"))
    assert body_data(driver, "step") == "0"
    driver.find_element(By.ID, "step").click()
    wait.until(lambda d: body_data(d, "step") == "1")
    driver.find_element(By.ID, "play-pause").click()
    wait.until(lambda d: int(body_data(d, "step")) >= 6)
    driver.find_element(By.ID, "play-pause").click()
    assert driver.find_element(By.ID, "play-pause").text == "▶ Play"
    assert driver.find_elements(By.CSS_SELECTOR, ".player .favors")  # a spectator sees the hands
    url = driver.current_url
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(url)
    wait.until(lambda d: d.find_elements(By.ID, "play-pause") and not d.find_elements(By.ID, "failure"))
    policy = driver.find_elements(By.ID, "show-policy")
    if policy:  # a checkpoint's suggestion now, none once the game is over
        policy[0].click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#policy table tr"))
    set_range(driver, "speed", 50)
    driver.find_element(By.ID, "play-pause").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#show-end:not([hidden])"))
    if policy:
        wait.until(lambda d: "nothing to suggest" in d.find_element(By.ID, "policy").text)
        assert not driver.find_elements(By.CSS_SELECTOR, "#policy table")
    driver.save_screenshot(str(shots / "watch-over.png"))
    record = driver.find_element(By.ID, "record-link").get_attribute("textContent")
    # Where the game's token is not known (another browser), the finished game opens as its replay.
    driver.execute_script("localStorage.clear(); sessionStorage.clear();")
    driver.get(url)
    wait.until(lambda d: "/replay/" in d.current_url and d.find_elements(By.ID, "where"))
    assert record in driver.current_url
    driver.close()
    driver.switch_to.window(first)


def test_the_leaderboard_ranks_every_agent_over_all_results(server, driver):
    driver.get(server + "/leaderboard")
    table = waiter(driver).until(lambda d: d.find_elements(By.ID, "overall"))[0]
    rows = table.find_elements(By.CSS_SELECTOR, "tr")[1:]
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == ["heuristic", "random"]
