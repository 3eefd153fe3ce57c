// What the table tells you between your turns and at the end: the recap since your last turn
// (each bot turn in words, its blocks marked on the board, every score change with its reason)
// and the end screen (the score table by category, every hand revealed, rematch, replay, analyse).
import { MARKS, favorEl } from "./board.js";
import { clear, h } from "./dom.js";
import { dot, seatName } from "./shared.js";

const signed = (n) => (n > 0 ? `+${n}` : `${n}`);

// The recap panel of the side column; recentCells() gives the board its marks.
export class RecapPanel {
  constructor(slot) {
    this.el = h("details", { class: "panel recap", id: "recap", open: true },
      h("summary", {}, h("h3", { text: "Since your last turn" })));
    this.body = h("div", { class: "recap-body" });
    this.el.append(this.body);
    slot.append(this.el);
    this.recap = null;
  }
  render(recap, names) {
    this.recap = recap;
    clear(this.body);
    if (!recap) {
      this.body.append(h("p", { class: "muted small", text: "Nothing yet: the recap of the other seats' turns comes here." }));
      return;
    }
    const turns = h("ol", { class: "recap-turns" });
    for (const turn of recap.turns) {
      const marked = turn.cells.length ? " (its blocks are ringed on the wall)" : "";
      turns.append(h("li", { "data-seat": turn.seat }, dot(turn.seat), h("b", { text: `${seatName(names, turn.seat)}${marked}` }),
        h("ul", {}, turn.lines.map((line) => h("li", { text: line })))));
    }
    this.body.append(turns);
    const scores = h("div", { class: "recap-scores", id: "recap-scores" });
    if (recap.scores.length) {
      scores.append(h("h4", { text: "Score changes" }), h("ul", {}, recap.scores.map((s) =>
        h("li", { class: s.points < 0 ? "loss" : "score" }, dot(s.seat), `${MARKS[s.seat]} ${signed(s.points)} VP ${s.why}`))));
    } else {
      scores.append(h("p", { class: "muted small", text: "No score changed." }));
    }
    const totals = recap.before.map((b, i) => `${MARKS[i]} ${b}${recap.after[i] !== b ? ` → ${recap.after[i]}` : ""}`);
    scores.append(h("p", { class: "small", text: `Scores: ${totals.join(" · ")}` }));
    this.body.append(scores);
  }
  // {cell: seat} of the cells the other seats changed since your last turn.
  recentCells(seat) {
    const out = {};
    for (const turn of this.recap ? this.recap.turns : []) {
      if (turn.seat === seat) continue;
      for (const cell of turn.cells) out[cell] = turn.seat;
    }
    return out;
  }
}

// The end screen, in a dialog: opened once when the game ends, and by the bar's button.
export function endScreen(snap, { onRematch, onReplay, onAnalyse }) {
  const dialog = document.getElementById("end-dialog");
  const body = clear(document.getElementById("end-body"));
  const end = snap.end;
  const won = end.winners.map((w) => seatName(snap.names, w)).join(" and ");
  body.append(h("h2", { text: `Game over: ${won} ${end.winners.length > 1 ? "win (tied)" : "wins"}` }));
  const head = h("tr", {}, h("th", { text: "seat" }), end.categories.map((c) => h("th", { class: "num", text: c })),
    h("th", { class: "num", text: "total" }), h("th", { class: "num", text: "blocks", title: "first tie-break: blocks in the wall" }),
    h("th", { class: "num", text: "Jade", title: "second tie-break" }), h("th", { class: "num", text: "Treasure", title: "third tie-break" }));
  const table = h("table", { class: "list end-table", id: "end-table" }, head);
  for (const row of end.rows) {
    table.append(h("tr", { class: row.winner ? "winner" : "", "data-seat": row.seat },
      h("td", {}, dot(row.seat), `${row.name}${row.winner ? " ★" : ""}`),
      row.points.map((p) => h("td", { class: "num", text: p ? p : "·" })),
      h("td", { class: "num total", text: row.total }), h("td", { class: "num", text: row.blocks_on_wall }),
      h("td", { class: "num", text: row.jade }), h("td", { class: "num", text: row.treasure })));
  }
  body.append(h("div", { class: "end-scroll" }, table),
    h("p", { class: "muted small", text: "Ties are broken by blocks in the wall, then Jade, then Treasure." }));
  const hands = h("div", { class: "end-hands", id: "end-hands" });
  for (const row of end.rows) {
    hands.append(h("section", { class: "end-hand", "data-seat": row.seat }, h("h4", {}, dot(row.seat), `${row.name}: favor hand revealed`),
      row.hand.length ? h("div", { class: "favors row" }, row.hand.map((c) => favorEl(c))) : h("p", { class: "muted small", text: "no card left in hand" }),
      row.played.length ? h("p", { class: "small", text: `played: ${row.played.map((c) => c.name).join(", ")}` }) : null));
  }
  body.append(hands);
  const button = (id, text, fn, disabled = false) => {
    const b = h("button", { type: "button", id, text, disabled, class: id === "rematch" ? "primary" : "" });
    b.addEventListener("click", () => {
      dialog.close();
      fn();
    });
    return b;
  };
  body.append(h("div", { class: "controls end-buttons" },
    button("rematch", "Rematch (same seats, a new deal)", onRematch),
    button("replay", "Replay this game", onReplay, !snap.record),
    button("analyse", "Analyse it (chances over the game)", onAnalyse, !snap.record)));
  if (!dialog.open) dialog.showModal();
}
