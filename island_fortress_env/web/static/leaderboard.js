// The leaderboard: the people who played here beside the agents (OpenSkill, on the ladder's
// scale), one overall ranking over every evaluation result, then each result's table.
import { get } from "./api.js";
import { clear, h } from "./dom.js";
import { nameForm } from "./person.js";
import { app, fitPage } from "./shared.js";

const pct = (x) => `${(100 * x).toFixed(1)}%`;

function row(cells) {
  return h("tr", {}, cells.map(([text, num, title]) => h("td", { class: num ? "num" : "", text, title })));
}

// People (person:NAME) and agents (agent:LABEL) in one ranking by the ordinal mu - 3 sigma: the
// agents on the ladder at their fixed ladder rating, the others as rated from people's games.
function peopleSection(people) {
  const section = h("section", { class: "card", id: "people", style: { marginBottom: "12px" } },
    h("h3", { text: "People and agents" }),
    h("p", { class: "muted small", text: "Each finished game of a named person updates their OpenSkill rating (Plackett-Luce, ranked by the final standings). Agents on the project's ladder play at their ladder rating and are not moved by these games, so a person's figure reads on the ladder's scale; other agents are rated from people's games. person: is a person, agent: an agent. Sorted by the ordinal μ − 3σ, a cautious estimate." }),
    nameForm());
  if (!people) return section;
  if (people.error) section.append(h("p", { class: "error", id: "people-error", text: people.error }));
  const rows = [...people.people.map((r) => ({ ...r, kind: "person" })), ...people.agents.map((r) => ({ ...r, kind: "agent" }))]
    .sort((a, b) => b.ordinal - a.ordinal);
  if (!people.people.length) section.append(h("p", { class: "muted", id: "no-people", text: "No person has finished a game under a name yet." }));
  const table = h("table", { class: "list", id: "people-table" }, h("tr", {}, ["#", "who", "rating (μ − 3σ)", "μ ± σ", "games", "wins", "from"]
    .map((c, i) => h("th", { class: i > 1 && i < 6 ? "num" : "", text: c }))));
  rows.forEach((r, i) => {
    table.append(h("tr", { class: r.kind, "data-kind": r.kind },
      h("td", { text: i + 1 }), h("td", { text: r.name, style: { fontWeight: r.kind === "person" ? "600" : "" } }),
      h("td", { class: "num", text: r.ordinal.toFixed(1) }), h("td", { class: "num", text: `${r.mu.toFixed(1)} ± ${r.sigma.toFixed(1)}` }),
      h("td", { class: "num", text: r.games ?? "—" }), h("td", { class: "num", text: r.wins === null || r.wins === undefined ? "—" : Number(r.wins.toFixed(2)) }),
      h("td", { class: "muted small", text: r.kind === "person" ? "people's games" : r.source })));
  });
  section.append(h("div", { style: { overflowX: "auto" } }, table));
  return section;
}

export class LeaderboardPage {
  dispose() {}
  async start() {
    fitPage(false);
    const root = clear(app());
    const data = await get("/api/leaderboard");
    root.append(h("h2", { text: "Leaderboard" }),
      h("p", { class: "muted", text: "From the evaluation results in the games directory: island-fortress evaluate A B C --games 201 --json > DIR/eval-NAME.json. Win rates with their 95% Wilson intervals; OpenSkill ratings when more than two kinds of agent played." }));
    root.append(peopleSection(data.people));
    if (!data.tables.length) root.append(h("p", { text: "No evaluation results found in the games directory." }));
    if (data.overall.length) {
      const table = h("table", { class: "list", id: "overall" }, h("tr", {}, ["#", "agent", "games", "wins", "win rate", "95% interval",
        "chance share", "× chance", "mean score", "tables"].map((c, i) => h("th", { class: i > 1 ? "num" : "", text: c }))));
      for (const a of data.overall) {
        table.append(row([[a.rank, false], [a.name, false, a.spec], [a.games, true], [a.wins, true], [pct(a.win_rate), true],
          [`${pct(a.ci95[0])}–${pct(a.ci95[1])}`, true], [pct(a.chance), true], [`${a.vs_chance.toFixed(2)}×`, true],
          [a.mean_score.toFixed(1), true], [`${a.tables} (${a.players.join("/")} players)`, true]]));
      }
      root.append(h("section", { class: "card", style: { marginBottom: "12px" } }, h("h3", { text: "Overall ranking" }),
        h("p", { class: "muted small", text: "Every table pooled: each agent's wins against what chance gives it (1/k of a game at a table of k players), best first. Ratings of different files are not comparable, so they stay in each file's table." }),
        table));
    }
    for (const t of data.tables) {
      const table = h("table", { class: "list" }, h("tr", {}, ["agent", "games", "wins", "win rate", "95% interval", "mean score", "rating (μ ± σ)"].map((c, i) =>
        h("th", { class: i ? "num" : "", text: c }))));
      for (const a of t.agents) {
        const rating = a.rating ? `${a.rating.mu.toFixed(2)} ± ${a.rating.sigma.toFixed(2)}` : "—";
        table.append(row([[a.name, false, a.spec], [a.games, true], [a.wins, true], [pct(a.win_rate), true],
          [`${pct(a.ci95[0])}–${pct(a.ci95[1])}`, true], [a.mean_score.toFixed(1), true], [rating, true]]));
      }
      root.append(h("section", { class: "card", style: { marginBottom: "12px" } },
        h("h3", { text: `${t.file}: ${t.players} players, ${t.games} games${t.seed !== null ? `, seed ${t.seed}` : ""}; chance share ${(100 / t.players).toFixed(1)}%` }), table));
    }
    for (const s of data.skipped) root.append(h("p", { class: "muted", text: `${s.file} skipped: ${s.reason}` }));
  }
}
