// The analysis panel: each seat's chance to win over the game (with its 95% band, the method, the
// count and the model error named; a tick a round), the mistakes the server marked, a compact
// move list (each turn a link to its position, in replays), and a checkpoint's top actions at the
// position shown.
import { get, post, query } from "./api.js";
import { MARKS } from "./board.js";
import { chartSvg, roundStarts } from "./chart.js";
import { clear, h, sleep } from "./dom.js";
import { turnStarts } from "./screen.js";
import { dot, seatName, shared, showError } from "./shared.js";

const pct = (p) => `${Math.round(100 * p)}%`;

export class Analysis {
  constructor({ players, names, jobPath, jobBody, policyPath, onPick, open = true }) {
    const config = shared.config;
    this.players = players;
    this.names = names;
    this.jobPath = jobPath;
    this.jobBody = jobBody;
    this.policyPath = policyPath;
    this.onPick = onPick;
    this.points = [];
    this.marks = [];
    this.moves = null; // each decision in words (replays), for the move list
    this.positions = [];
    this.total = 0;
    this.now = 0;
    this.disposed = false;
    this.el = h("details", { class: "panel", id: "analysis", open }, h("summary", {}, h("h3", { text: "Analysis: chances to win" })));
    this.playout = h("select", { id: "playout" }, config.playouts.map((p) => h("option", { value: p, text: `${p} playouts` })));
    this.rollouts = h("input", { id: "rollouts", type: "number", min: 1, max: config.max_rollouts,
      value: config.rollouts[config.playouts[0]], style: { width: "5.5em" } });
    // Each method has its own default count (enough for a band of a few points); a count the
    // person typed is kept when it is larger.
    this.playout.addEventListener("change", () => {
      const wanted = config.rollouts[this.playout.value];
      if (!this.typed || Number(this.rollouts.value) < wanted) this.rollouts.value = wanted;
    });
    this.rollouts.addEventListener("input", () => {
      this.typed = true;
    });
    this.estimate = h("button", { id: "estimate", type: "button", text: "Estimate chances" });
    this.estimate.addEventListener("click", () => this.run(this.lastPositions).catch(showError));
    this.follow = h("input", { type: "checkbox", id: "follow" });
    this.method = h("p", { class: "muted small", id: "method", text: "Chances to win: not estimated yet." });
    this.current = h("p", { class: "chances", id: "chances" });
    this.chart = h("div", {});
    this.legend = h("div", { class: "legend" }, names.map((n, i) => h("span", {}, dot(i), `${MARKS[i]} ${n}`)));
    this.markBox = h("div", { id: "mistakes" });
    this.moveList = h("div", { id: "move-list", role: "list", "aria-label": "the moves, turn by turn",
      style: { maxHeight: "11em", overflowY: "auto", fontSize: "12.5px", lineHeight: "1.5", margin: "4px 0" } });
    this.el.append(h("div", { class: "controls" }, this.playout, h("label", {}, "rollouts ", this.rollouts), this.estimate),
      h("div", { class: "controls" }, h("label", {}, this.follow, " keep estimating as the game goes")),
      this.chart, this.legend, this.current, this.method, this.markBox,
      h("h3", { text: "Moves", style: { marginBottom: "0" } }), this.moveList);
    if (config.checkpoints.length) {
      this.checkpoint = h("select", { id: "checkpoint" }, config.checkpoints.map((c) => h("option", { value: c, text: c.split(/[\\/]/).pop() })));
      this.policyBox = h("div", { id: "policy" });
      this.showPolicy = h("input", { type: "checkbox", id: "show-policy" });
      this.showPolicy.addEventListener("change", () => this.policy(this.policyQuery).catch(showError));
      this.checkpoint.addEventListener("change", () => this.policy(this.policyQuery).catch(showError));
      this.el.append(h("h3", { text: "A checkpoint's view" }),
        h("div", { class: "controls" }, h("label", {}, this.showPolicy, " top actions of "), this.checkpoint), this.policyBox);
    }
    this.draw();
    // Folded, the panel is not redrawn at each move (a move is drawn sooner); it is when opened.
    this.el.addEventListener("toggle", () => {
      if (this.el.open && this.stale) this.redraw();
    });
  }
  redraw() {
    this.stale = false;
    this.draw();
    this.drawMoves();
  }
  dispose() {
    this.disposed = true;
  }
  reset() {
    this.points = [];
    this.marks = [];
    this.draw();
    this.drawMarks();
  }
  // Each decision in words (a replay's), for the move list.
  setMoves(moves) {
    this.moves = moves;
    this.listed = null;
  }
  draw() {
    clear(this.chart).append(chartSvg(this.points, { players: this.players, total: this.total, now: this.now,
      onPick: this.onPick, rounds: roundStarts(this.positions), marks: this.marks }));
    const at = [...this.points].filter((p) => p.step <= this.now).sort((a, b) => b.step - a.step)[0];
    clear(this.current);
    if (at) {
      this.current.append(`At decision ${at.step}: `, ...at.chances.map((c, i) => h("span", { class: "chance" }, dot(i),
        `${MARKS[i]} ${pct(c)}`, h("span", { class: "muted", text: ` (${pct(at.low[i])}–${pct(at.high[i])})` }))));
    }
  }
  moved(positions, now) {
    this.lastPositions = positions;
    this.positions = positions;
    this.total = positions.length - 1;
    this.now = now;
    if (this.el.open) this.redraw();
    else this.stale = true;
    if (this.follow.checked && !this.running) this.run(positions).catch(showError);
  }
  async run(positions) {
    if (!positions) return;
    const steps = turnStarts(positions);
    this.running = true;
    try {
      let job = await post(this.jobPath, { ...this.jobBody(), steps, playout: this.playout.value, rollouts: Number(this.rollouts.value) });
      while (!this.disposed) {
        this.points = job.points;
        this.marks = job.marks || [];
        this.draw();
        this.method.textContent = `${job.method}; ${job.points.length} of ${job.steps.length} positions (turn starts), ${job.seconds} s${job.done ? "" : " so far…"}`;
        if (job.error) this.method.textContent += ` — ${job.error}`;
        if (job.done) {
          this.drawMarks();
          this.drawMoves(true);
          break;
        }
        await sleep(400);
        job = await get(`/api/analysis/${job.job}`);
      }
    } finally {
      this.running = false;
    }
  }
  // The mistakes in words, each a link to the turn it was made in (when the page can jump).
  drawMarks() {
    clear(this.markBox);
    if (!this.marks.length) {
      if (this.points.length) this.markBox.append(h("p", { class: "muted small", id: "no-mistakes",
        text: "No turn lost more than the bands explain." }));
      return;
    }
    const list = h("ol", { class: "small", style: { margin: "2px 0", paddingLeft: "20px" } });
    for (const m of this.marks) {
      const sign = m.kind === "blunder" ? "??" : "?";
      const where = `decision ${m.at ?? m.step}`;
      const item = h("li", { class: `mistake ${m.kind}`, "data-step": m.at ?? m.step, "data-kind": m.kind },
        h("strong", { text: `${sign} ${MARKS[m.seat]}, ${where}: `, style: { color: m.kind === "blunder" ? "#b4232a" : "#a4571a" } }),
        m.text);
      if (this.onPick) {
        item.style.cursor = "pointer";
        item.addEventListener("click", () => this.onPick(m.at ?? m.step));
      }
      list.append(item);
    }
    this.markBox.append(h("h3", { text: `Mistakes (${this.marks.length})`, style: { marginBottom: "0" } }), list);
  }
  // The moves turn by turn, a row a round: "A Recruiter…", each turn a link to its first decision
  // (replays); the turn shown is highlighted and a marked turn carries its "?" or "??".
  drawMoves(force = false) {
    const positions = this.positions;
    if (!positions.length) return;
    const starts = turnStarts(positions).filter((s) => s < positions.length - 1);
    const key = `${positions.length}:${this.marks.length}`;
    if (force || this.listed !== key) {
      this.listed = key;
      const marked = new Map(this.marks.map((m) => [m.step, m]));
      clear(this.moveList);
      let row = null;
      let round = null;
      this.turnLinks = [];
      starts.forEach((step, i) => {
        const pos = positions[step];
        if (pos.round !== round || !row) {
          round = pos.round;
          row = h("div", { class: "move-round", role: "listitem", "data-round": round },
            h("span", { class: "muted", text: round ? `R${round} ` : "deal ", style: { fontWeight: "600" } }));
          this.moveList.append(row);
        }
        const end = starts[i + 1] ?? positions.length - 1;
        const words = this.moves ? this.moves.slice(step, end) : [];
        const mark = marked.get(step);
        const link = h(this.onPick ? "a" : "span", { class: "move-turn", "data-step": step, "data-end": end,
          href: this.onPick ? "#" : null, title: words.join("; ") || `decision ${step}`,
          style: { display: "inline-block", maxWidth: "13em", overflow: "hidden", textOverflow: "ellipsis",
            whiteSpace: "nowrap", verticalAlign: "bottom", marginRight: "6px", padding: "0 3px", borderRadius: "3px" } },
        dot(pos.mover), `${MARKS[pos.mover]} ${words[0] || ""}`.trimEnd(),
        mark ? h("strong", { class: "move-mark", text: mark.kind === "blunder" ? " ??" : " ?", style: { color: "#b4232a" } }) : null);
        if (this.onPick) {
          link.addEventListener("click", (event) => {
            event.preventDefault();
            this.onPick(step);
          });
        }
        this.turnLinks.push(link);
        row.append(link);
      });
    }
    for (const link of this.turnLinks || []) {
      const here = Number(link.dataset.step) <= this.now && this.now < Number(link.dataset.end);
      link.classList.toggle("now", here);
      link.style.background = here ? "#f3e2b8" : "";
      if (here && link.scrollIntoView && this.moveList.scrollHeight > this.moveList.clientHeight) {
        const box = this.moveList.getBoundingClientRect();
        const at = link.getBoundingClientRect();
        if (at.top < box.top || at.bottom > box.bottom) this.moveList.scrollTop += at.top - box.top - box.height / 2;
      }
    }
  }
  // params null: nothing to suggest (another seat's move, or the game is over): the box is cleared.
  async policy(params) {
    this.policyQuery = params;
    if (!this.policyBox) return;
    clear(this.policyBox);
    if (!params) {
      if (this.over) this.policyBox.append(h("p", { class: "muted", text: "The game is over: nothing to suggest." }));
      return;
    }
    if (!this.showPolicy.checked) return;
    const result = await get(this.policyPath + query({ ...params, checkpoint: this.checkpoint.value }));
    if (this.disposed || params !== this.policyQuery) return;
    if (!result.actions.length) {
      this.policyBox.append(h("p", { class: "muted", text: "No decision here." }));
      return;
    }
    const table = h("table", { class: "top-actions" });
    for (const a of result.actions) {
      const mark = result.chosen === a.action ? " ← played" : "";
      table.append(h("tr", {}, h("td", { style: { width: "60px" } }, h("div", { class: "bar", style: { width: `${Math.max(2, a.probability * 60)}px` } })),
        h("td", { text: `${(100 * a.probability).toFixed(1)}%` }), h("td", { text: a.label + mark })));
    }
    const name = this.checkpoint.value.split(/[\\/]/).pop();
    this.policyBox.append(h("p", { class: "muted", text: `${name}, for ${seatName(this.names, result.seat)}:` }), table);
  }
}
