// The table screen shared by play, watch and replay: the table (status, wall, players) on the
// left, the side column (recap, the score if the game ended now, the log, the analysis) on the
// right, the bar at the bottom. The page fills the window; the table and the side column each
// scroll on their own, so the bar, the recap, the log and the chances are all reachable while
// the wall stays in view. On a phone the page is one column: tabs switch between the table and
// the side column, and the wall is drawn one region a row so that its cells stay readable.
import { MARKS, boardSvg, playersEl } from "./board.js";
import { clear, h } from "./dom.js";
import { app, bar, dot, fitPage } from "./shared.js";

const PHONE = window.matchMedia("(max-width: 760px)");

export class Screen {
  constructor() {
    fitPage(true);
    this.status = h("p", { class: "status", id: "status" });
    this.sub = h("p", { class: "substatus", id: "substatus" });
    this.board = h("div", { class: "board-wrap", id: "board-wrap" });
    this.players = h("div", { id: "players-slot" });
    this.recapBox = h("div", { id: "recap-slot" });
    this.scoreBox = h("div", { id: "score-slot" });
    this.logBox = h("div", { class: "log", id: "log", role: "log", "aria-live": "polite" });
    this.analysisSlot = h("div", { class: "analysis-slot", id: "analysis-slot" });
    this.side = h("div", { class: "side", id: "side" }, this.recapBox, this.scoreBox,
      h("section", { class: "panel log-panel", id: "log-panel" }, h("h3", { text: "What happened" }), this.logBox),
      this.analysisSlot);
    this.table = h("div", { class: "table-col", id: "table-col" }, this.status, this.sub, this.board, this.players);
    // Phones: two tabs, the table and the side column (desktop windows show both and hide these).
    this.tabs = h("div", { class: "phone-tabs", role: "tablist", id: "phone-tabs" });
    this.game = h("div", { class: "game", "data-tab": "table" }, this.table, this.side);
    for (const [tab, text] of [["table", "Table"], ["side", "Recap · log · chances"]]) {
      const b = h("button", { type: "button", role: "tab", "data-tab": tab, id: `tab-${tab}`, text });
      b.addEventListener("click", () => this.showTab(tab));
      this.tabs.append(b);
    }
    clear(app()).append(this.tabs, this.game);
    this.showTab("table");
    this.bar = bar();
    clear(this.bar);
    this.bar.hidden = false;
    this.last = null;
    this.onMedia = () => this.last && this.draw(...this.last);
    PHONE.addEventListener("change", this.onMedia);
  }
  dispose() {
    PHONE.removeEventListener("change", this.onMedia);
  }
  showTab(tab) {
    this.game.dataset.tab = tab;
    for (const b of this.tabs.children) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
  }
  draw(view, opts = {}) {
    this.last = [view, opts];
    const perRow = PHONE.matches ? 1 : view.regions;
    clear(this.board).append(boardSvg(view, { ...opts, perRow }));
    clear(this.players).append(playersEl(view, opts));
  }
  // The scores if the game ended now (the server's, from the engine's final scoring).
  drawScore(ifEnded, names) {
    clear(this.scoreBox);
    if (!ifEnded) return;
    if (!this.scorePanel) {
      this.scorePanel = h("details", { class: "panel if-ended-panel", id: "if-ended", open: true },
        h("summary", {}, h("h3", { text: "If the game ended now" })));
      this.scoreBody = h("div", {});
      this.scorePanel.append(this.scoreBody);
    }
    const body = clear(this.scoreBody);
    // One column a seat (four fit the side column), one row a category of the end scoring.
    const rows = ifEnded.rows;
    const table = h("table", { class: "list score-table", id: "if-ended-table" },
      h("tr", {}, h("th", { text: "" }), rows.map((r) => h("th", { class: "num", "data-seat": r.seat, title: names[r.seat] },
        dot(r.seat), `${MARKS[r.seat]}${ifEnded.winners.includes(r.seat) ? " ★" : ""}`))),
      h("tr", {}, h("td", { text: "score now" }), rows.map((r) => h("td", { class: "num", text: r.now }))),
      ifEnded.categories.map((c, i) => h("tr", { class: "small" }, h("td", { text: `+ ${c}` }),
        rows.map((r) => h("td", { class: "num", text: r.points[i] ? (r.points[i] > 0 ? `+${r.points[i]}` : r.points[i]) : "·" })))),
      h("tr", { class: "total-row" }, h("td", { text: "if it ended now" }),
        rows.map((r) => h("td", { class: "num total", "data-total": r.seat, text: r.total }))));
    body.append(h("div", { class: "end-scroll" }, table), h("p", { class: "muted small", text: ifEnded.note }));
    this.scoreBox.append(this.scorePanel);
  }
  logLine(text, cls, seat = null) {
    const p = h("p", { class: cls }, seat !== null ? dot(seat) : null, text);
    this.logBox.append(p);
    return p;
  }
  clearLog() {
    clear(this.logBox);
  }
  scrollLog() {
    this.logBox.scrollTop = this.logBox.scrollHeight;
  }
}

// The decisions at which a turn starts (a new mover or a new round), and the last one.
export function turnStarts(positions) {
  const out = [];
  positions.forEach((p, i) => {
    const prev = positions[i - 1];
    if (i === 0 || !prev || p.mover !== prev.mover || p.round !== prev.round || i === positions.length - 1) out.push(i);
  });
  return out;
}
