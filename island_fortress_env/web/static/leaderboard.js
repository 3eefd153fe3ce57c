// The leaderboard: one overall ranking over every evaluation result, then each result's table.
import { get } from "./api.js";
import { clear, h } from "./dom.js";
import { app, fitPage } from "./shared.js";

const pct = (x) => `${(100 * x).toFixed(1)}%`;

function row(cells) {
  return h("tr", {}, cells.map(([text, num, title]) => h("td", { class: num ? "num" : "", text, title })));
}

export class LeaderboardPage {
  dispose() {}
  async start() {
    fitPage(false);
    const root = clear(app());
    const data = await get("/api/leaderboard");
    root.append(h("h2", { text: "Leaderboard" }),
      h("p", { class: "muted", text: "From the evaluation results in the games directory: island-fortress evaluate A B C --games 201 --json > DIR/eval-NAME.json. Win rates with their 95% Wilson intervals; OpenSkill ratings when more than two kinds of agent played." }));
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
