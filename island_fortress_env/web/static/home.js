// The start page: a game against named bot levels, agents to watch, the records to replay.
import { get, post, upload } from "./api.js";
import { MARKS } from "./board.js";
import { clear, h } from "./dom.js";
import { app, fitPage, levelSelect, navigate, shared, showError, tokens } from "./shared.js";
import { nameForm, withName } from "./person.js";

// Start a game (play or watch) and go to its page; also the end screen's rematch.
export async function startGame(kind, body) {
  const game = await post(`/api/${kind}`, kind === "play" ? withName(body) : body); // rated under the name
  tokens.set(game.id, game.token);
  navigate(`/${kind}/${game.id}`);
}

export class HomePage {
  constructor() {
    this.disposed = false;
  }
  dispose() {
    this.disposed = true;
  }
  async start() {
    fitPage(false);
    const config = shared.config;
    const root = clear(app());
    const levels = config.levels;
    const defaultAgent = (levels.find((l) => l.spec === "heuristic") || levels[0]).spec;
    // Play
    const players = h("select", { id: "play-players" }, config.players.map((n) =>
      h("option", { value: n, selected: n === 3, text: `${n} players` })));
    const seat = h("select", { id: "play-seat" });
    const opponents = h("div", { id: "play-opponents" });
    const refresh = () => {
      const n = Number(players.value);
      const keep = Math.min(Number(seat.value || 0), n - 1);
      clear(seat).append(...Array.from({ length: n }, (_, i) =>
        h("option", { value: i, selected: i === keep, text: `${MARKS[i]}${i === 0 ? " (plays first in round 1)" : ""}` })));
      const before = [...opponents.querySelectorAll("select")].map((s) => s.value);
      clear(opponents);
      let k = 0;
      for (let i = 0; i < n; i++) {
        if (i === Number(seat.value)) continue;
        opponents.append(h("div", { class: "form-row" }, h("label", { text: `seat ${MARKS[i]}` }),
          levelSelect(`opponent-${i}`, before[k++] || defaultAgent)));
      }
    };
    players.addEventListener("change", refresh);
    seat.addEventListener("change", refresh);
    refresh();
    const seed = h("input", { id: "play-seed", type: "number", min: 0, placeholder: "random", style: { width: "8em" } });
    const startPlay = h("button", { id: "start-play", type: "button", class: "primary", text: "Start the game" });
    startPlay.addEventListener("click", () => {
      const body = {
        players: Number(players.value),
        seat: Number(seat.value),
        opponents: [...opponents.querySelectorAll("select")].map((s) => s.value),
      };
      if (seed.value !== "") body.seed = Number(seed.value);
      startGame("play", body).catch(showError);
    });
    // Watch
    const wPlayers = h("select", { id: "watch-players" }, config.players.map((n) =>
      h("option", { value: n, selected: n === 3, text: `${n} players` })));
    const wAgents = h("div", {});
    const wRefresh = () => {
      clear(wAgents);
      for (let i = 0; i < Number(wPlayers.value); i++) {
        wAgents.append(h("div", { class: "form-row" }, h("label", { text: `seat ${MARKS[i]}` }),
          levelSelect(`agent-${i}`, defaultAgent)));
      }
    };
    wPlayers.addEventListener("change", wRefresh);
    wRefresh();
    const startWatch = h("button", { id: "start-watch", type: "button", text: "Watch them play" });
    startWatch.addEventListener("click", () => {
      startGame("watch", { agents: [...wAgents.querySelectorAll("select")].map((s) => s.value) }).catch(showError);
    });
    // Replay
    const list = h("div", { id: "records" }, h("p", { class: "muted", text: "Loading the games directory…" }));
    const file = h("input", { type: "file", accept: ".json,application/json", id: "upload" });
    file.addEventListener("change", async () => {
      if (!file.files.length) return;
      try {
        const done = await upload("/api/records", await file.files[0].text());
        navigate(`/replay/${encodeURIComponent(done.name)}`);
      } catch (e) {
        showError(e);
      }
    });
    // The rating in plain words; what OpenSkill is and where the numbers come from in the tooltip.
    const ladder = h("p", { class: "muted small", id: "rating-words" }, "Bot levels, weakest first, each with its ",
      h("abbr", { id: "rating-help", tabindex: 0, title: "OpenSkill rates each bot from its games against the others on the "
        + "project's 2-player ladder. The number shown is a cautious estimate of its strength: its estimated skill less "
        + "three times the uncertainty of that estimate, so it rises as a bot wins and as more games are played. "
        + `Source: ${config.ladder}.`, text: "rating (OpenSkill)" }),
      ": higher is stronger.");
    root.append(h("div", { class: "cards" },
      h("section", { class: "card" }, h("h2", { text: "Play" }),
        h("p", { class: "muted", text: "You against bots. Click on the table or in the bar at the bottom to choose; only legal choices are clickable." }),
        h("div", { class: "form-row" }, h("label", { text: "table" }), players),
        h("div", { class: "form-row" }, h("label", { text: "your seat" }), seat),
        opponents, ladder,
        h("div", { class: "form-row" }, h("label", { text: "seed" }), seed),
        nameForm(),
        startPlay),
      h("section", { class: "card" }, h("h2", { text: "Watch" }),
        h("p", { class: "muted", text: "Bots against bots, with speed, pause and step." }),
        h("div", { class: "form-row" }, h("label", { text: "table" }), wPlayers), wAgents, startWatch),
      h("section", { class: "card" }, h("h2", { text: "Replay" }),
        h("div", { class: "form-row" }, h("label", { text: "open a file" }), file), list)));
    const { records, skipped } = await get("/api/records");
    if (this.disposed) return;
    clear(list);
    const notes = (skipped || []).slice(0, 20).map((s) => h("p", { class: "muted", text: `${s.file} skipped: ${s.reason}` }));
    if (!records.length) {
      list.append(h("p", { class: "muted", text: "No game records in the games directory yet." }), ...notes);
      return;
    }
    const table = h("table", { class: "list" }, h("tr", {}, h("th", { text: "game" }), h("th", { text: "seats" }),
      h("th", { class: "num", text: "scores" })));
    for (const r of records.slice(0, 200)) {
      const agents = r.agents.map((a, i) => `${MARKS[i]} ${a}${r.winners.includes(i) ? " ★" : ""}`).join(", ");
      const link = h("a", { href: `/replay/${encodeURIComponent(r.name)}`, "data-nav": true, text: r.name });
      table.append(h("tr", {}, h("td", {}, link), h("td", { text: agents }), h("td", { class: "num", text: r.scores.join(" / ") })));
    }
    list.append(table, ...notes);
  }
}
