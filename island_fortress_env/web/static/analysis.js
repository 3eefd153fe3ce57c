// The analysis panel: each seat's chance to win over the game (with its 95% band, the method and
// the count named), and a checkpoint's top actions at the position shown.
import { get, post, query } from "./api.js";
import { MARKS } from "./board.js";
import { chartSvg } from "./chart.js";
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
    this.el.append(h("div", { class: "controls" }, this.playout, h("label", {}, "rollouts ", this.rollouts), this.estimate),
      h("div", { class: "controls" }, h("label", {}, this.follow, " keep estimating as the game goes")),
      this.chart, this.legend, this.current, this.method);
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
  }
  dispose() {
    this.disposed = true;
  }
  reset() {
    this.points = [];
    this.draw();
  }
  draw() {
    clear(this.chart).append(chartSvg(this.points, { players: this.players, total: this.total, now: this.now, onPick: this.onPick }));
    const at = [...this.points].filter((p) => p.step <= this.now).sort((a, b) => b.step - a.step)[0];
    clear(this.current);
    if (at) {
      this.current.append(`At decision ${at.step}: `, ...at.chances.map((c, i) => h("span", { class: "chance" }, dot(i),
        `${MARKS[i]} ${pct(c)}`, h("span", { class: "muted", text: ` (${pct(at.low[i])}–${pct(at.high[i])})` }))));
    }
  }
  moved(positions, now) {
    this.lastPositions = positions;
    this.total = positions.length - 1;
    this.now = now;
    this.draw();
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
        this.draw();
        this.method.textContent = `${job.method}; ${job.points.length} of ${job.steps.length} positions (turn starts), ${job.seconds} s${job.done ? "" : " so far…"}`;
        if (job.error) this.method.textContent += ` — ${job.error}`;
        if (job.done) break;
        await sleep(400);
        job = await get(`/api/analysis/${job.job}`);
      }
    } finally {
      this.running = false;
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
