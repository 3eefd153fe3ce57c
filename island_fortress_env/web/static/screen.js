// The table screen shared by play, watch and replay: the table (status, wall, players) on the
// left, the side column (recap, the log, the analysis) on the right, the bar at the bottom. The
// page fills the window; each column scrolls inside it, so the bar and the log stay in view.
import { boardSvg, playersEl } from "./board.js";
import { clear, h } from "./dom.js";
import { app, bar, dot, fitPage } from "./shared.js";

export class Screen {
  constructor() {
    fitPage(true);
    this.status = h("p", { class: "status", id: "status" });
    this.sub = h("p", { class: "substatus", id: "substatus" });
    this.board = h("div", { class: "board-wrap" });
    this.players = h("div", {});
    this.recapBox = h("div", { id: "recap-slot" });
    this.logBox = h("div", { class: "log", id: "log", role: "log", "aria-live": "polite" });
    this.analysisSlot = h("div", { class: "analysis-slot" });
    this.side = h("div", { class: "side" }, this.recapBox,
      h("section", { class: "panel log-panel" }, h("h3", { text: "What happened" }), this.logBox),
      this.analysisSlot);
    this.table = h("div", { class: "table-col" }, this.status, this.sub, this.board, this.players);
    clear(app()).append(h("div", { class: "game" }, this.table, this.side));
    this.bar = bar();
    clear(this.bar);
    this.bar.hidden = false;
  }
  draw(view, opts = {}) {
    clear(this.board).append(boardSvg(view, opts));
    clear(this.players).append(playersEl(view, opts));
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
