"""Ratings for people and lichess-style analysis in a real browser (headless Chromium): a name
chosen once on the start page and two whole games played by clicking under it, rated on the
leaderboard as ``person:NAME`` beside the agents, with no console error and no server warning
over both games (the server runs uvicorn with the app's own protocol, as ``serve`` does); a bad
name refused with the server's reason; a replay's mistake marks and compact move list, each a
link that moves the replay; a tick on the chances' graph at each round; the replay bar padded,
its text inside the window at 1400x857, 1280x720 and 390x844 (by element geometry).
Screenshots go to the folder conftest names (``analysis-*.png``, ``ratings-*.png``)."""

# ruff: noqa: E501 - the page-side script below is JavaScript, one statement a line

from __future__ import annotations

import logging
import random
from typing import Any

import pytest

pytest.importorskip("selenium", reason="Selenium is missing (the [browser] extra)")
pytest.importorskip("openskill", reason="people's ratings need openskill (the [web] extra)")

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from island_fortress_env.env.records import save, states
from tests.browser.conftest import ROOT, on_loopback, set_viewport
from tests.browser.test_browser import (
    CLICKABLE,
    END_TURN,
    body_data,
    confirm_turn_end,
    decision_title,
    waiter,
)
from tests.browser.test_table_layout import IDS, SIZES, reach
from tests.test_web_analysis_marks import lopsided

NAME = "Ana Lúcia"
UNUSED_CONNECTION_SECONDS = 2.0


class Warnings(logging.Handler):
    """Every warning or error the server logs (uvicorn's loggers do not pass them to the root)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name}: {record.getMessage()}")


@pytest.fixture(scope="module")
def logged():
    return Warnings()


@pytest.fixture(scope="module")
def server(games_dir, logged):
    """The app served as ``serve`` serves it (``web.serving``: its protocol, deadlines and log
    level), every warning of the server kept in ``logged``; yields its base URL."""
    from island_fortress_env.web import create_app, serving

    save(lopsided(), games_dir / "lopsided.json")
    agents = ["random", "heuristic"]
    checkpoint = ROOT / "checkpoints" / "policy-2-4p.zip"
    if checkpoint.is_file():
        agents.append(str(checkpoint))
    app = create_app(agents, games_dir, allowed_hosts=["127.0.0.1"])
    loggers = [
        logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access", "island_fortress_env")
    ]

    def config(port: int) -> Any:
        made = serving.server_config(app, "127.0.0.1", port)
        # uvicorn's configuration resets its loggers' handlers: listen from here on
        for log in loggers:
            log.addHandler(logged)
        return made

    try:
        # The request deadline short enough that the connections Chromium opens ahead of need
        # and never uses run past it during the games (at 10 s they would outlive the test).
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(serving, "HEADER_SECONDS", UNUSED_CONNECTION_SECONDS)
            with on_loopback(config) as url:
                yield url
    finally:
        for log in loggers:
            log.removeHandler(logged)


def severe(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def play_by_clicking(driver, draw: random.Random) -> int:
    """Play the game on the page to its end by clicking what the page offers (a menu's choice
    first, a warned choice confirmed); returns the clicks."""
    wait = waiter(driver)
    clicks = 0
    for _ in range(3000):
        wait.until(lambda d: decision_title(d) in ("Your move", "Game over", END_TURN))
        if confirm_turn_end(driver):
            wait.until(lambda d: decision_title(d) != END_TURN)
            continue
        if decision_title(driver) == "Game over":
            return clicks
        step = body_data(driver, "step")
        found = [(c["el"], c["kind"]) for c in driver.execute_script(CLICKABLE)]
        assert found, "the person's move offers nothing to click"
        menu = [c for c in found if c[0] and c[1] == "menu"]
        plain = [c for c in found if c[1] not in ("warned", "governor cell")]
        element, kind = draw.choice(menu or plain or found)
        had_menu = bool(menu)
        had_pick = bool(driver.find_elements(By.CSS_SELECTOR, "svg.board .picked"))
        element.click()
        clicks += 1
        if kind == "warned":
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "dialog#confirm[open]"))
            driver.find_element(By.ID, "confirm-yes").click()
        wait.until(
            lambda d, step=step, had_menu=had_menu, had_pick=had_pick: (
                body_data(d, "step") != step
                or decision_title(d) == "Game over"
                or (not had_menu and d.find_elements(By.ID, "menu"))
                or (not had_pick and d.find_elements(By.CSS_SELECTOR, "svg.board .picked"))
            )
        )
    pytest.fail("the game did not end")


def start_named(driver, server, seed: int) -> None:
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "start-play") and d.find_elements(By.ID, "person-name"))
    driver.execute_script("localStorage.setItem('if-guide-seen', '1');")
    Select(driver.find_element(By.ID, "play-players")).select_by_value("2")
    for select in driver.find_elements(By.CSS_SELECTOR, "#play-opponents select"):
        Select(select).select_by_value("random")
    driver.find_element(By.ID, "play-seed").send_keys(str(seed))
    driver.find_element(By.ID, "start-play").click()
    wait.until(lambda d: "/play/" in d.current_url and d.find_elements(By.ID, "pause"))
    driver.execute_script(
        "const p = document.getElementById('pause'); p.value = 0; p.dispatchEvent(new Event('input'));"
    )


# --------------------------------------------------------------------------- ratings


def test_a_name_chosen_once_rates_two_whole_games_without_a_console_error_or_a_server_warning(
    server, driver, shots, logged
):
    set_viewport(driver, 1400, 857)
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "person-name"))
    driver.execute_script("localStorage.removeItem('if-person-name');")
    driver.refresh()
    wait.until(lambda d: d.find_elements(By.ID, "person-name"))
    severe(driver)  # the log so far is read and dropped
    box = driver.find_element(By.ID, "person-name")
    box.clear()
    box.send_keys(f"  {NAME} ")
    driver.find_element(By.ID, "save-name").click()
    wait.until(lambda d: "Saved" in d.find_element(By.ID, "name-status").text)
    assert driver.execute_script("return localStorage.getItem('if-person-name')") == NAME
    driver.save_screenshot(str(shots / "ratings-1400x857-name.png"))
    draw = random.Random(5)
    clicks = 0
    for seed in (21, 22):  # the name is kept: nothing asked again
        start_named(driver, server, seed)
        clicks += play_by_clicking(driver, draw)
        assert not severe(driver)
    assert clicks > 40
    driver.get(server + "/leaderboard")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#people-table tr.person"))
    person = driver.find_element(By.CSS_SELECTOR, "#people-table tr.person")
    cells = [td.text for td in person.find_elements(By.TAG_NAME, "td")]
    assert cells[1] == f"person:{NAME}" and cells[4] == "2", cells
    agents = [
        tr.find_elements(By.TAG_NAME, "td")[1].text
        for tr in driver.find_elements(By.CSS_SELECTOR, "#people-table tr.agent")
    ]
    assert "agent:random" in agents and "agent:heuristic" in agents
    assert not any(a.startswith("person:") for a in agents)
    assert "person:" in driver.find_element(By.ID, "name-status").text
    reach(driver, "#people-table")
    driver.save_screenshot(str(shots / "ratings-1400x857-leaderboard.png"))
    assert not severe(driver)
    assert logged.lines == [], logged.lines  # not one warning over two whole games


def test_a_bad_name_is_refused_with_the_servers_reason_and_not_kept(server, driver):
    set_viewport(driver, 1280, 720)
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "person-name"))
    driver.execute_script("localStorage.setItem('if-person-name', 'Bo');")
    box = driver.find_element(By.ID, "person-name")
    box.clear()
    box.send_keys("agent:search")
    driver.find_element(By.ID, "save-name").click()
    wait.until(lambda d: "Not saved" in d.find_element(By.ID, "name-status").text)
    assert "letters, digits" in driver.find_element(By.ID, "name-status").text
    assert driver.execute_script("return localStorage.getItem('if-person-name')") == "Bo"
    driver.execute_script("localStorage.removeItem('if-person-name');")
    severe(driver)  # the refused request (a 400) is the browser's own log line, not the page's error


# --------------------------------------------------------------------------- analysis


def open_replay(driver, server, step: int) -> None:
    driver.get(f"{server}/replay/lopsided.json?step={step}")
    waiter(driver).until(lambda d: d.find_elements(By.ID, "estimate") and body_data(d, "step") == str(step))
    driver.execute_script("document.getElementById('analysis').open = true;")


def test_mistake_marks_and_the_move_list_jump_the_replay(server, driver, shots):
    set_viewport(driver, 1400, 857)
    open_replay(driver, server, 0)
    wait = waiter(driver)
    rollouts = driver.find_element(By.ID, "rollouts")
    rollouts.clear()
    rollouts.send_keys("64")
    driver.find_element(By.ID, "estimate").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#mistakes li.mistake, #no-mistakes"))
    marks = driver.find_elements(By.CSS_SELECTOR, "#mistakes li.mistake")
    assert marks, "the lopsided game has mistakes"
    text = marks[0].text
    assert "chance to win fell" in text and ("preferred" in text or "would have played the same" in text)
    assert "model error" in driver.find_element(By.ID, "method").text
    dots = driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart .mistake-dot")
    assert len(dots) == len(marks)
    target = marks[-1].get_attribute("data-step")
    driver.execute_script("arguments[0].scrollIntoView({block: 'nearest'});", marks[-1])
    marks[-1].click()
    wait.until(lambda d: body_data(d, "step") == target)
    # The move list: a row a round, a link a turn, the turn shown highlighted; a click jumps.
    turns = driver.find_elements(By.CSS_SELECTOR, "#move-list .move-turn")
    rows = driver.find_elements(By.CSS_SELECTOR, "#move-list .move-round")
    assert len(turns) > 40 and len(rows) >= 8
    now = driver.find_elements(By.CSS_SELECTOR, "#move-list .move-turn.now")
    assert len(now) == 1 and int(now[0].get_attribute("data-step")) <= int(target) < int(
        now[0].get_attribute("data-end")
    )
    assert driver.find_elements(By.CSS_SELECTOR, "#move-list .move-mark")
    pick = turns[len(turns) // 2]
    step = pick.get_attribute("data-step")
    driver.execute_script("arguments[0].scrollIntoView({block: 'nearest'});", pick)
    pick.click()
    wait.until(lambda d: body_data(d, "step") == step)
    assert pick.get_attribute("title")  # the turn's moves in words
    reach(driver, "#move-list")
    reach(driver, "#mistakes")
    driver.save_screenshot(str(shots / "analysis-1400x857-mistakes.png"))
    assert not severe(driver)


def test_the_chances_graph_has_a_tick_at_each_round(server, driver, shots):
    set_viewport(driver, 1400, 857)
    open_replay(driver, server, 10)
    every = states(lopsided())
    rounds = sorted({s.round for s in every if s.round > 0})
    ticks = driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart line.round-tick")
    assert [int(t.get_attribute("data-round")) for t in ticks] == rounds
    firsts = [next(i for i, s in enumerate(every) if s.round == r) for r in rounds]
    assert [int(t.get_attribute("data-step")) for t in ticks] == firsts
    xs = [float(t.get_attribute("x1")) for t in ticks]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart text.round-label")
    reach(driver, "#analysis svg.chart")
    driver.save_screenshot(str(shots / "analysis-1400x857-round-ticks.png"))
    assert not severe(driver)


# Each text of the replay bar inside the bar's padded box and the window.
BAR = """
const bar = document.getElementById("bar");
const st = getComputedStyle(bar);
const box = bar.getBoundingClientRect();
const inner = { left: box.left + parseFloat(st.paddingLeft) + parseFloat(st.borderLeftWidth),
  right: box.right - parseFloat(st.paddingRight) - parseFloat(st.borderRightWidth) - (bar.offsetWidth - bar.clientWidth) };
const out = { padding: [parseFloat(st.paddingLeft), parseFloat(st.paddingRight)], failures: [] };
for (const el of bar.querySelectorAll("h3, .replay-name, #replay-seats, #where, button, select, input")) {
  const r = el.getBoundingClientRect();
  if (r.width < 1) continue;
  if (r.left < inner.left - 1 || r.right > inner.right + 1 || r.right > innerWidth)
    out.failures.push(`${el.id || el.className || el.tagName}: ${Math.round(r.left)}-${Math.round(r.right)} outside ${Math.round(inner.left)}-${Math.round(inner.right)}`);
  if (el.scrollWidth > el.clientWidth + 1 && !["INPUT", "SELECT"].includes(el.tagName))
    out.failures.push(`${el.id || el.className || el.tagName}: its text is cut (${el.scrollWidth} > ${el.clientWidth})`);
}
out.sideways = document.scrollingElement.scrollWidth > innerWidth + 1;
return out;
"""


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_the_replay_bar_is_padded_and_its_text_inside_the_window(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    open_replay(driver, server, 30)
    out = driver.execute_script(BAR)
    assert min(out["padding"]) >= 6, out["padding"]
    assert not out["failures"], out["failures"]
    assert not out["sideways"]
    reach(driver, "#bar #where")
    reach(driver, "#bar #copy-link")
    driver.save_screenshot(str(shots / f"analysis-{width}x{height}-replay-bar.png"))
    assert not severe(driver)
