"""The table's layout in a real browser (headless Chromium) at a laptop's window (1400x857), a small
one (1280x720) and a phone's (390x844): every control, every card of your hand, the recap, the log,
the score if the game ended now and the analysis chart reachable without the page scrolling
sideways, asserted by element geometry. "Reachable" is what a player can do: the element comes
into the window by scrolling its own scroll container (the side column, the hand list, the bar's
decision area) or, on a phone, by the tab that shows it, and a click at its centre lands on it;
scrolling a container that hides its overflow does not count. Also: the bid's number field in step
with its slider, undo open until the end of the turn is confirmed, the first-game guide, the start
page on a phone, the 404 page. Positions are reached by playing through the API from the page's own
origin (a seeded game, the person's choices drawn by a fixed rule), then opening the game's page.
Screenshots go to the folder conftest names (``layout-*.png``)."""

# ruff: noqa: E501 - the page-side scripts below are JavaScript, one statement a line

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

pytest.importorskip("selenium", reason="Selenium is missing (the [browser] extra)")

from selenium.webdriver.common.by import By

from tests.browser.conftest import set_viewport
from tests.browser.test_browser import waiter

SIZES = [(1400, 857), (1280, 720), (390, 844)]
IDS = ["1400x857", "1280x720", "390x844"]

# Bring each element of arguments[0] (CSS) into view as a player would and say which cannot be:
# the phone's tab first, then scrollIntoView; an ancestor that hides its overflow must not move.
REACH = """
const [css, atLeast, covered] = arguments;
const els = [...document.querySelectorAll(css)];
const out = { count: els.length, failures: [] };
const hidden = [...document.querySelectorAll("*")].map((e) => {
  const st = getComputedStyle(e);
  return [e, st.overflowY === "hidden" || st.overflowY === "clip", st.overflowX === "hidden" || st.overflowX === "clip"];
}).filter(([, y, x]) => x || y);
els.forEach((el, i) => {
  const tabs = document.getElementById("phone-tabs");
  if (tabs && getComputedStyle(tabs).display !== "none") {
    const want = el.closest(".side") ? "side" : el.closest(".table-col") ? "table" : null;
    if (want) document.getElementById(`tab-${want}`).click();
  }
  const before = hidden.map(([e]) => [e.scrollTop, e.scrollLeft]);
  el.scrollIntoView({ block: "nearest", inline: "nearest" });
  const moved = hidden.filter(([e, y, x], k) => (y && e.scrollTop !== before[k][0]) || (x && e.scrollLeft !== before[k][1]));
  moved.forEach(([e]) => { e.scrollTop = 0; e.scrollLeft = 0; });
  const r = el.getBoundingClientRect();
  const where = `${css}[${i}] ${el.id || el.className.baseVal || el.className} at ${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}`;
  if (r.width < 1 || r.height < 1) { out.failures.push(`${where}: not shown`); return; }
  if (moved.length) { out.failures.push(`${where}: only by scrolling a container that hides its overflow`); return; }
  if (r.left < -1 || r.right > innerWidth + 1) { out.failures.push(`${where}: off the window sideways`); return; }
  const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
  if (bottom - top < Math.min(r.height, 12) - 1) { out.failures.push(`${where}: out of the window`); return; }
  if (covered) return; // may lie under something that can be moved away (the guide)
  const box = el.getClientRects()[0] || r; // an inline element over two lines: its first line
  const x = Math.min(Math.max(box.left + box.width / 2, 1), innerWidth - 1);
  const y = (Math.max(box.top, 0) + Math.min(box.bottom, innerHeight)) / 2;
  const hit = document.elementFromPoint(x, y);
  if (!hit || !(el === hit || el.contains(hit))) out.failures.push(`${where}: covered by ${hit && (hit.id || hit.className)}`);
});
const page = document.scrollingElement;
out.sideways = page.scrollWidth > innerWidth + 1 || scrollX !== 0;
if (out.count < atLeast) out.failures.push(`${css}: ${out.count} found, ${atLeast} expected`);
return out;
"""

# Start a game through the API from the page's own origin, keep its token where the page keeps it.
START = """
const [body, done] = [arguments[0], arguments[arguments.length - 1]];
fetch("/api/play", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
  .then((r) => r.json()).then((game) => {
    const all = JSON.parse(localStorage.getItem("if-tokens") || "{}");
    all[game.id] = { token: game.token, at: Date.now() };
    localStorage.setItem("if-tokens", JSON.stringify(all));
    done(game.id);
  }, (e) => done(String(e)));
"""

# Play the game through the API until the goal holds at a decision of the person's: the agents
# move by `advance`; the person takes, by a fixed rule, a choice that is not warned (no bid but
# the least, Draw Favor Cards whenever it is offered when the goal is a large hand).
DRIVE = """
const [id, goal, limit, done] = [arguments[0], arguments[1], arguments[2], arguments[arguments.length - 1]];
const token = JSON.parse(localStorage.getItem("if-tokens"))[id].token;
const post = (path, body) => fetch(`/api/games/${id}/${path}`, { method: "POST",
  headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, ...body }) }).then((r) => r.json());
const kinds = (snap) => new Set(snap.view.choices.map((c) => c.kind));
const reached = (snap) => {
  const k = kinds(snap);
  if (goal === "petition") return k.has("bid");
  if (goal === "roles") return k.has("role") && snap.recap;
  if (goal === "repeat") return k.has("repeat") && k.has("role");
  if (goal.startsWith("hand:")) return k.has("role") && (snap.hand || []).length >= Number(goal.slice(5));
  if (goal === "turn-end") return snap.view.round > 0 && snap.view.choices.some((c) => /End the turn/.test(c.label));
  return false;
};
(async () => {
  let snap = await fetch(`/api/games/${id}?token=${token}`).then((r) => r.json());
  for (let i = 0; i < limit && !snap.over; i++) {
    if (!snap.waiting) { snap = await post("advance", { moves: 50 }); continue; }
    if (reached(snap)) return done({ ok: true, step: snap.step });
    const warned = snap.warnings || {};
    let options = snap.view.choices.filter((c) => !warned[String(c.action)]);
    if (!options.length) options = snap.view.choices;
    const bid = options.filter((c) => c.kind === "bid").sort((a, b) => a.value - b.value);
    const draw = options.filter((c) => /Draw Favor Cards|draw 3 keep 2/.test(c.label));
    const notEnd = options.filter((c) => !/End the turn|Move the Taskmaster/.test(c.label) && c.kind !== "repeat");
    let pick = bid[0];
    if (!pick && goal.startsWith("hand:") && draw.length) pick = draw[0];
    if (!pick && goal === "repeat") pick = notEnd.find((c) => c.kind === "role") || notEnd[0];
    if (!pick) pick = (notEnd.length ? notEnd : options)[(i * 7) % (notEnd.length || options.length)];
    snap = await post("act", { action: pick.action });
    if (snap.error) return done({ ok: false, error: snap.error });
  }
  done({ ok: false, error: `goal ${goal} not reached`, over: snap.over });
})();
"""


def open_game(driver, server, goal: str | None, players: int = 2, seed: int = 3, limit: int = 800) -> str:
    """A new seeded game against random bots, played to ``goal`` (None: the deal), then its page
    opened with the guide already seen and the bots' pause at 0."""
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "start-play"))
    driver.execute_script("localStorage.setItem('if-guide-seen', '1');")
    body = {"players": players, "seat": 0, "opponents": ["random"] * (players - 1), "seed": seed}
    game = driver.execute_async_script(START, body)
    if goal is not None:
        done = driver.execute_async_script(DRIVE, game, goal, limit)
        assert done["ok"], done
    driver.get(f"{server}/play/{game}")
    wait.until(
        lambda d: (
            d.find_elements(By.ID, "pause")
            and d.execute_script("return document.body.dataset.waiting") == "yes"
        )
    )
    driver.execute_script(
        "const p = document.getElementById('pause'); p.value = 0; p.dispatchEvent(new Event('input'));"
    )
    return game


def reach(driver, css: str, at_least: int = 1, covered: bool = False) -> int:
    """Every element ``css`` matches is reachable (module doc) and the page does not scroll sideways;
    ``covered``: it may lie under something the player can move away (the guide's card)."""
    out = driver.execute_script(REACH, css, at_least, covered)
    assert not out["failures"], out["failures"]
    assert not out["sideways"], f"the page scrolls sideways ({css})"
    return out["count"]


def shot(driver, shots, name: str, width: int, height: int) -> None:
    """A screenshot of the table as it opens (the phone's table tab, each column at its top)."""
    driver.execute_script(
        "document.getElementById('tab-table') && document.getElementById('tab-table').click();"
        "for (const e of [document.getElementById('table-col'), document.getElementById('side'),"
        " document.querySelector('main'), document.scrollingElement]) if (e) e.scrollTop = 0;"
    )
    driver.save_screenshot(str(shots / f"layout-{width}x{height}-{name}.png"))


def no_console_errors(driver) -> None:
    assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_analysis(driver) -> None:
    driver.execute_script("document.getElementById('analysis').open = true;")


# --------------------------------------------------------------------------- every size


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_the_deal_every_card_to_keep_and_every_control_is_reachable(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    open_game(driver, server, None)
    waiter(driver).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#bar-favors .favor.target"))
    assert reach(driver, "#bar-favors .favor.target") == 5  # the engine deals 5 (keep 3)
    for css in (
        "#undo, #pause",
        "#rules-button",
        "#guide-button",
        "#my-hand",
        "#status",
        "svg.board",
        "#log",
        "#if-ended-table",
        "#analysis summary",
    ):
        reach(driver, css)
    shot(driver, shots, "deal", width, height)
    no_console_errors(driver)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_at_the_role_choice_every_choice_the_recap_the_log_and_the_chart_are_reachable(
    server, driver, shots, width, height
):
    set_viewport(driver, width, height)
    open_game(driver, server, "roles", players=3, seed=5)
    assert reach(driver, "#decision button.choice[data-action]", 3) >= 3
    for css in (
        "#refused summary",
        "#recap",
        "#recap-scores",
        "#log-panel h3",
        "#log p",
        "#if-ended-table",
        "#my-hand",
        ".player[data-seat='1'] .res",
        ".player[data-seat='2'] .res",
    ):
        reach(driver, css)
    open_analysis(driver)
    for css in ("#estimate", "#rollouts", "#analysis svg.chart", "#method"):
        reach(driver, css)
    shot(driver, shots, "roles", width, height)
    no_console_errors(driver)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_the_bid_has_a_number_field_in_step_with_its_slider_and_the_rivals_beside_it(
    server, driver, shots, width, height
):
    set_viewport(driver, width, height)
    open_game(driver, server, "petition", players=3, seed=2)
    for css in ("#bid", "#bid-number", "#seal-bid", "#rivals .rival"):
        reach(driver, css)
    top = int(driver.find_element(By.ID, "bid-number").get_attribute("max"))
    assert top >= 1
    number = driver.find_element(By.ID, "bid-number")
    number.clear()
    number.send_keys(str(top))
    seal = driver.find_element(By.ID, "seal-bid")
    assert seal.text == f"Seal a bid of {top} Jade"
    assert driver.find_element(By.ID, "bid").get_attribute("value") == driver.find_element(
        By.ID, "bid"
    ).get_attribute("max")
    driver.execute_script(
        "const p = document.getElementById('bid'); p.value = 0; p.dispatchEvent(new Event('input'));"
    )
    assert driver.find_element(By.ID, "bid-number").get_attribute("value") == "0"
    number.clear()
    number.send_keys(str(top + 50))  # beyond the legal bids: the most that can be bid
    assert seal.text == f"Seal a bid of {top} Jade"
    view = driver.execute_script(
        "const t = JSON.parse(localStorage.getItem('if-tokens')); const id = location.pathname.split('/').pop();"
        "return fetch(`/api/games/${id}?token=${t[id].token}`).then((r) => r.json());"
    )["view"]
    rivals = driver.find_element(By.ID, "rivals").text
    for p in view["players"][1:]:
        assert f"{p['mark']}: {p['jade']} Jade, petition +{p['petition_bonus']}" in rivals
    shot(driver, shots, "bid", width, height)
    no_console_errors(driver)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_every_card_of_a_large_hand_is_listed_with_its_progress(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    game = open_game(driver, server, "hand:6", players=2, seed=7, limit=1500)
    snap = driver.execute_script(
        "const t = JSON.parse(localStorage.getItem('if-tokens'));"
        f"return fetch('/api/games/{game}?token=' + t['{game}'].token).then((r) => r.json());"
    )
    hand = snap["hand"]
    assert len(hand) >= 6
    assert reach(driver, "#my-hand .favor", len(hand)) == len(hand)
    shown = driver.execute_script(
        "return [...document.querySelectorAll('#my-hand .favor')].map((e) => [Number(e.dataset.card), e.dataset.need,"
        " e.querySelector('.need').textContent, e.title]);"
    )
    by_id = {p["id"]: p for p in hand}
    for card, need, words, title in shown:
        progress = by_id[card]
        assert need == ("none" if progress["need"] is None else str(progress["need"]))
        assert ("complete" in words) == (progress["need"] == 0)
        assert "counts once you play the card" in title and progress["progress"] in title
    shot(driver, shots, "hand", width, height)
    no_console_errors(driver)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_the_score_if_the_game_ended_now_is_the_servers_with_each_bonus(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    game = open_game(driver, server, "roles", players=4, seed=11)
    snap = driver.execute_script(
        "const t = JSON.parse(localStorage.getItem('if-tokens'));"
        f"return fetch('/api/games/{game}?token=' + t['{game}'].token).then((r) => r.json());"
    )
    reach(driver, "#if-ended-table td.total", 4)
    totals = driver.execute_script(
        "return [...document.querySelectorAll('#if-ended-table td.total')].map((e) => Number(e.textContent));"
    )
    assert totals == [row["total"] for row in snap["if_ended"]["rows"]]
    table = driver.find_element(By.ID, "if-ended-table").get_attribute("textContent")
    for category in snap["if_ended"]["categories"]:
        assert f"+ {category}" in table
    reach(driver, ".player .if-ended", 4)
    shot(driver, shots, "score", width, height)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=IDS)
def test_the_taskmasters_repeats_keep_the_bar_small_and_the_hints_in_view(
    server, driver, shots, width, height
):
    set_viewport(driver, width, height)
    open_game(driver, server, "repeat", players=2, seed=4, limit=1500)
    reach(driver, "#repeats button.choice", 1)
    reach(driver, "#decision button.choice[data-action]", 2)
    bar = driver.execute_script(
        "return document.getElementById('bar').getBoundingClientRect().height / innerHeight;"
    )
    assert bar <= 0.5, f"the bar takes {bar:.0%} of the window"
    shot(driver, shots, "repeats", width, height)


# --------------------------------------------------------------------------- one size or two


def test_undo_stays_open_until_the_end_of_the_turn_is_confirmed(server, driver, shots):
    """With no pause at all, a move that ends the turn waits for the confirmation: Undo takes it
    back; once confirmed, the bots play."""
    set_viewport(driver, 1400, 857)
    open_game(driver, server, "turn-end", players=2, seed=6, limit=1500)
    wait = waiter(driver)
    step = int(driver.execute_script("return document.body.dataset.step"))
    end = [
        b
        for b in driver.find_elements(By.CSS_SELECTOR, "#decision button.choice")
        if "End the turn" in b.text
    ]
    assert end, "no End the turn choice"
    end[0].click()
    if driver.find_elements(By.CSS_SELECTOR, "dialog#confirm[open]"):
        driver.find_element(By.ID, "confirm-yes").click()
    wait.until(lambda d: d.find_elements(By.ID, "end-turn"))
    reach(driver, "#end-turn")
    reach(driver, "#undo:enabled")
    assert "plays next" in driver.find_element(By.ID, "handover").text
    shot(driver, shots, "end-turn", 1400, 857)
    driver.find_element(By.ID, "undo").click()  # the bots have not moved: it is taken back
    wait.until(lambda d: int(d.execute_script("return document.body.dataset.step")) == step)
    end = [
        b
        for b in driver.find_elements(By.CSS_SELECTOR, "#decision button.choice")
        if "End the turn" in b.text
    ]
    end[0].click()
    if driver.find_elements(By.CSS_SELECTOR, "dialog#confirm[open]"):
        driver.find_element(By.ID, "confirm-yes").click()
    wait.until(lambda d: d.find_elements(By.ID, "end-turn"))
    driver.find_element(By.ID, "end-turn").click()
    wait.until(lambda d: int(d.execute_script("return document.body.dataset.step")) > step + 1)
    no_console_errors(driver)


@pytest.mark.parametrize(("width", "height"), [SIZES[0], SIZES[2]], ids=[IDS[0], IDS[2]])
def test_the_first_game_guide_shows_once_and_opens_again(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    driver.get(server + "/")
    wait = waiter(driver)
    wait.until(lambda d: d.find_elements(By.ID, "start-play"))
    driver.execute_script("localStorage.removeItem('if-guide-seen');")
    driver.find_element(By.ID, "play-seed").send_keys("5")
    driver.find_element(By.ID, "start-play").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#guide:not([hidden])"))
    assert "dealt 5 favor cards and keep 3" in driver.find_element(By.ID, "guide-text").text
    titles, texts = [], []
    for _ in range(10):
        reach(driver, "#guide-next")
        reach(driver, ".guide-focus", covered=True)  # the element the step tells of is in view
        titles.append(driver.find_element(By.CSS_SELECTOR, "#guide h3").text)
        texts.append(driver.find_element(By.ID, "guide-text").text)
        if len(titles) == 2:
            shot(driver, shots, "guide", width, height)
        if driver.find_element(By.ID, "guide-next").text == "Start playing":
            break
        driver.find_element(By.ID, "guide-next").click()
    assert any("reward counts only once you play it" in t for t in texts), texts
    assert any("Undo takes back your moves until you end your turn" in t for t in texts), texts
    driver.find_element(By.ID, "guide-next").click()
    assert driver.execute_script("return localStorage.getItem('if-guide-seen')") == "1"
    assert not driver.find_elements(By.CSS_SELECTOR, "#guide:not([hidden])")
    driver.refresh()
    wait.until(lambda d: d.find_elements(By.ID, "guide-button") and d.find_elements(By.ID, "pause"))
    assert not driver.find_elements(By.CSS_SELECTOR, "#guide:not([hidden])")
    driver.find_element(By.ID, "guide-button").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#guide:not([hidden])"))
    driver.find_element(By.ID, "guide-close").click()
    assert len(titles) >= 6, titles


@pytest.mark.parametrize(("width", "height"), [SIZES[0], SIZES[2]], ids=[IDS[0], IDS[2]])
def test_the_start_page_fits_and_says_what_a_rating_is(server, driver, shots, width, height):
    set_viewport(driver, width, height)
    driver.get(server + "/")
    waiter(driver).until(lambda d: d.find_elements(By.ID, "start-play"))
    for css in (
        "#rules-button",
        "#guide-button",
        "#play-players",
        "#play-seat",
        "#play-opponents select",
        "#watch-players",
        "#start-play",
        "#rating-help",
    ):
        reach(driver, css)
    help_ = driver.find_element(By.ID, "rating-help")
    assert help_.text == "rating (OpenSkill)" and "cautious estimate" in help_.get_attribute("title")
    assert "mu - 3 sigma" not in driver.find_element(By.ID, "rating-words").text
    options = [o.text for o in driver.find_elements(By.CSS_SELECTOR, "#play-opponents select option")]
    assert any("rating" in o for o in options) and not any("ladder" in o for o in options)
    shot(driver, shots, "start", width, height)


def test_a_phone_shows_the_wall_one_region_a_row_with_cells_large_enough_to_tap(server, driver, shots):
    set_viewport(driver, 390, 844)
    open_game(driver, server, None, players=4)
    sizes = driver.execute_script(
        "return [...document.querySelectorAll('svg.board rect.cell')].map((r) => r.getBoundingClientRect().width);"
    )
    assert sizes and min(sizes) >= 40, min(sizes)  # a 4-player wall of 3 regions
    label = driver.execute_script(
        "const t = document.querySelector('svg.board text.coord'); const r = t.getBoundingClientRect(); return r.height;"
    )
    assert label >= 10
    reach(driver, "svg.board rect.cell", 51)
    reach(driver, "#tab-table")
    reach(driver, "#tab-side")


def test_the_opponents_panels_show_their_resources_without_scrolling_at_1400x857(server, driver):
    set_viewport(driver, 1400, 857)
    open_game(driver, server, "roles", players=4, seed=12)
    inside = driver.execute_script(
        "const col = document.getElementById('table-col').getBoundingClientRect();"
        "return [...document.querySelectorAll('.player .res')].map((e) => {"
        " const r = e.getBoundingClientRect(); return r.top >= col.top && r.top + 30 <= col.bottom; });"
    )
    assert inside == [True] * 4, inside


def test_the_log_names_every_setup_card_kept_and_a_bot_by_its_level(server, driver):
    set_viewport(driver, 1400, 857)
    open_game(driver, server, "petition", players=2, seed=3)
    log = driver.find_element(By.ID, "log").get_attribute("textContent")
    kept = [line for line in log.split("A (you): ") if line.lower().startswith("keep")]
    assert len(kept) == 3, log[:2000]
    assert "B (Beginner bot)" in log and "(random)" not in log


def test_an_unknown_page_is_a_page_and_an_unknown_api_path_json(server, driver):
    set_viewport(driver, 1400, 857)
    driver.get(server + "/no/such/page")
    found = waiter(driver).until(lambda d: d.find_elements(By.ID, "not-found"))[0]
    assert "There is no page here" in found.text and "/no/such/page" in found.text
    reach(driver, "#not-found a")
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(server + "/api/no-such-thing", timeout=30)
    assert answer.value.code == 404
    assert "error" in json.loads(answer.value.read())
