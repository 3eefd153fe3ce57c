"""The page in a real browser (headless Chromium): a whole game played against bots by
clicking on the table, agents watched, a record replayed forward and back, an analysis drawn.
Screenshots are taken on the way (see conftest)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from island_fortress_env.env.records import load

pytest.importorskip("selenium", reason="Selenium is missing (the [browser] extra)")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 30  # seconds a page may take to show what a step expects (a bound, not a measurement)

# What the person may click: marked cells, camps and prisons, favor cards, role cards, the
# decision's buttons.
CLICKABLE = """
const picked = document.querySelector("svg.board .picked");
return [...document.querySelectorAll(
  "svg.board .target, .favor.target, .role.target, #decision button.choice[data-action]:not([disabled])"
)].filter((el) => {
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && !el.closest("details:not([open])") && el !== picked;
});
"""


def kind_of(element) -> str:
    if element.get_attribute("data-cell") is not None:
        return "cell"
    if element.get_attribute("data-prison") is not None:
        return "prison"
    if element.get_attribute("data-region") is not None:
        return "camp"
    if element.get_attribute("data-card") is not None:
        return "favor card"
    if element.get_attribute("data-role") is not None:
        return "role card"
    if element.get_attribute("id") == "seal-bid":
        return "bid"
    return "button"


def body_data(driver, key: str) -> str | None:
    return driver.execute_script(f"return document.body.dataset.{key} || null;")


def decision_title(driver) -> str:
    return driver.execute_script(
        "const t = document.querySelector('#decision h3'); return t ? t.textContent : '';"
    )


def test_a_whole_game_against_bots_played_by_clicking(server, driver, shots, games_dir):
    driver.get(server + "/")
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: d.find_elements(By.ID, "start-play"))
    Select(driver.find_element(By.ID, "play-players")).select_by_value("2")
    Select(driver.find_element(By.CSS_SELECTOR, "#play-opponents select")).select_by_value("random")
    driver.find_element(By.ID, "play-seed").send_keys("17")
    driver.find_element(By.ID, "start-play").click()
    wait.until(lambda d: "/play/" in d.current_url)
    wait.until(lambda d: d.find_elements(By.ID, "pause"))
    driver.execute_script(
        "const p = document.getElementById('pause'); p.value = 0; p.dispatchEvent(new Event('input'));"
    )
    draw = random.Random(17)
    clicked: Counter[str] = Counter()
    pictured = False
    for _ in range(2000):
        wait.until(lambda d: decision_title(d) in ("Your move", "Game over"))
        if decision_title(driver) == "Game over":
            break
        step = body_data(driver, "step")
        candidates = driver.execute_script(CLICKABLE)
        assert candidates, "the person's move offers nothing to click"
        menu = driver.find_elements(By.CSS_SELECTOR, "#menu button.choice")
        on_table = [c for c in candidates if kind_of(c) != "button"]
        element = draw.choice(menu or on_table or candidates)  # a menu opened by a click: choose in it
        kind = kind_of(element)
        if kind == "cell" and not pictured:
            driver.save_screenshot(str(shots / "play.png"))
            pictured = True
        element.click()
        clicked[kind] += 1
        wait.until(
            lambda d, step=step, kind=kind: (
                body_data(d, "step") != step
                or (kind != "button" and d.find_elements(By.ID, "menu"))
                or d.find_elements(By.CSS_SELECTOR, "svg.board .picked")
            )
        )
    else:
        pytest.fail("the game did not end")
    driver.save_screenshot(str(shots / "play-over.png"))
    assert {"cell", "favor card", "role card", "bid"} <= set(clicked), clicked
    link = WebDriverWait(driver, WAIT).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "a[href^='/replay/play-']")
    )
    record = load(games_dir / link[0].text)
    assert record.agents == ("human", "random") and record.seed == 17
    shown = [int(el.text.split()[0]) for el in driver.find_elements(By.CSS_SELECTOR, "[data-score]")]
    assert shown == list(record.scores)
    log = driver.find_element(By.ID, "log").text
    assert "Game over. Final scores:" in log and "VP = " in log
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def replay_at(driver) -> int:
    return int(body_data(driver, "step"))


def test_a_record_replayed_forward_and_back(server, driver, shots, games_dir):
    record = load(games_dir / "fixture-game.json")
    total = len(record.actions)
    driver.get(server + "/replay/fixture-game.json?step=40")
    wait = WebDriverWait(driver, WAIT)
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
    assert "Round 3 begins" in driver.find_element(By.ID, "log").text
    driver.save_screenshot(str(shots / "replay.png"))
    # A shared link opens the replay at its step.
    link = driver.find_element(By.ID, "share").get_attribute("value")
    driver.get(link)
    wait.until(lambda d: d.find_elements(By.ID, "where") and replay_at(d) == first_of_round)


def test_an_analysis_is_drawn_over_the_game(server, driver, shots):
    driver.get(server + "/replay/fixture-game.json?step=120")
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: d.find_elements(By.ID, "estimate") and body_data(d, "step") == "120")
    driver.find_element(By.ID, "rollouts").clear()
    driver.find_element(By.ID, "rollouts").send_keys("16")
    driver.find_element(By.ID, "estimate").click()
    wait.until(
        lambda d: (
            "so far" not in d.find_element(By.ID, "method").text
            and "positions" in d.find_element(By.ID, "method").text
        )
    )
    method = driver.find_element(By.ID, "method").text
    assert method.startswith("16 random playouts per position, from the true position")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#analysis svg.chart polyline")) == 3
    if driver.find_elements(By.ID, "show-policy"):
        driver.find_element(By.ID, "show-policy").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#policy table tr"))
    driver.save_screenshot(str(shots / "analysis.png"))


def test_agents_watched_with_play_pause_and_step(server, driver):
    driver.get(server + "/")
    wait = WebDriverWait(driver, WAIT)
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
    hands = driver.find_elements(By.CSS_SELECTOR, ".player .favors")
    assert hands  # a spectator sees the hands
