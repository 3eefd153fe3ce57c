// A replay: any record of the games directory, stepped by decision or by turn, viewed as one
// seat saw it or with every hand; its link opens it at its step (?analyse=1 starts the analysis).
import { get, query } from "./api.js";
import { MARKS } from "./board.js";
import { Analysis } from "./analysis.js";
import { clear, h, toast } from "./dom.js";
import { Screen, turnStarts } from "./screen.js";
import { navigate, seatName, showError } from "./shared.js";

export class ReplayPage {
  constructor(name, params) {
    this.name = name;
    this.step = Math.max(0, Number(params.get("step") || 0) || 0);
    this.seat = params.get("seat") === null || params.get("seat") === "" ? null : Number(params.get("seat"));
    this.analyse = params.get("analyse") === "1";
    this.disposed = false;
    this.ticket = 0;
  }
  dispose() {
    this.disposed = true;
    if (this.analysis) this.analysis.dispose();
    if (this.screen && this.screen.dispose) this.screen.dispose();
    document.removeEventListener("keydown", this.keys);
  }
  async start() {
    this.summary = await get(`/api/records/${encodeURIComponent(this.name)}${query({ seat: this.seat })}`);
    if (this.disposed) return;
    const sum = this.summary;
    this.step = Math.min(this.step, sum.total);
    this.turns = turnStarts(sum.positions);
    this.screen = new Screen();
    this.screen.bar.classList.add("action-bar"); // the bar's padding and frame, as in play
    const button = (text, id, fn) => {
      const b = h("button", { type: "button", id, text });
      b.addEventListener("click", fn);
      return b;
    };
    this.slider = h("input", { type: "range", id: "step-slider", min: 0, max: sum.total, value: this.step });
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    const rounds = [...new Set(sum.positions.map((p) => p.round))];
    this.roundSelect = h("select", { id: "round" }, rounds.map((r) => h("option", { value: r, text: r ? `round ${r}` : "the deal" })));
    this.roundSelect.addEventListener("change", () => {
      const r = Number(this.roundSelect.value);
      this.go(sum.positions.findIndex((p) => p.round === r));
    });
    const seatSelect = h("select", { id: "view-as" }, h("option", { value: "", text: "everyone's hands", selected: this.seat === null }),
      sum.agents.map((a, i) => h("option", { value: i, selected: this.seat === i, text: `only what ${MARKS[i]} (${a}) sees` })));
    seatSelect.addEventListener("change", () => {
      navigate(`/replay/${encodeURIComponent(this.name)}${query({ step: this.step, seat: seatSelect.value })}`);
    });
    this.share = h("input", { class: "share", id: "share", readonly: true });
    const copy = button("Copy link", "copy-link", async () => {
      this.share.select();
      try {
        await navigator.clipboard.writeText(this.share.value);
        toast("Link copied");
      } catch {
        toast("Select the link and copy it");
      }
    });
    this.where = h("span", { id: "where" });
    const seats = sum.agents.map((a, i) => `${MARKS[i]} ${a} ${sum.scores[i]}${sum.winners.includes(i) ? " ★" : ""}`).join(" · ");
    this.screen.bar.append(h("section", { class: "bar-main replay-bar", id: "decision" },
      h("div", { class: "prompt" }, h("h3", { text: "Replay" }), h("span", { class: "replay-name", text: sum.name }),
        h("span", { class: "muted", id: "replay-seats", text: seats })),
      h("div", { class: "controls slider-row" },
        button("First", "first", () => this.go(0)),
        button("◀ turn", "prev-turn", () => this.go([...this.turns].reverse().find((t) => t < this.step) ?? 0)),
        button("◀", "prev", () => this.go(this.step - 1)),
        button("▶", "next", () => this.go(this.step + 1)),
        button("turn ▶", "next-turn", () => this.go(this.turns.find((t) => t > this.step) ?? sum.total)),
        button("Last", "last", () => this.go(sum.total)), this.slider, this.where),
      h("div", { class: "controls" }, this.roundSelect, seatSelect, this.share, copy)));
    this.analysis = new Analysis({
      players: sum.players, names: sum.agents,
      jobPath: `/api/records/${encodeURIComponent(this.name)}/analysis`, jobBody: () => ({ seat: this.seat }),
      policyPath: `/api/records/${encodeURIComponent(this.name)}/policy`, onPick: (step) => this.go(step),
      open: this.analyse, // folded unless asked for, so that the log keeps its height
    });
    this.analysis.setMoves(sum.moves);
    this.screen.analysisSlot.append(this.analysis.el);
    this.keys = (event) => {
      if (event.target.tagName === "INPUT" && event.target.type !== "range") return;
      if (event.key === "ArrowRight") this.go(this.step + 1);
      if (event.key === "ArrowLeft") this.go(this.step - 1);
    };
    document.addEventListener("keydown", this.keys);
    await this.go(this.step);
    this.analysis.moved(sum.positions, this.step);
    if (this.analyse) this.analysis.run(sum.positions).catch(showError);
  }
  async go(step) {
    const sum = this.summary;
    step = Math.max(0, Math.min(sum.total, step));
    this.step = step;
    const ticket = ++this.ticket;
    const data = await get(`/api/records/${encodeURIComponent(this.name)}/steps/${step}${query({ seat: this.seat })}`);
    if (this.disposed || ticket !== this.ticket) return;
    const view = data.view;
    this.slider.value = step;
    const pos = sum.positions[step];
    this.roundSelect.value = pos.round;
    this.screen.status.textContent = view.headline;
    document.body.dataset.step = step;
    const last = step > 0 ? `Last: ${seatName(sum.agents, sum.positions[step - 1].mover)} — ${sum.moves[step - 1]}. ` : "";
    const next = step < sum.total ? `Next: ${seatName(sum.agents, pos.mover)} — ${sum.moves[step]}.` : "The game is over.";
    this.screen.sub.textContent = `${last}${next}`;
    this.where.textContent = `decision ${step} of ${sum.total} · ${pos.round ? `round ${pos.round}` : "the deal"}`;
    this.screen.draw(view, { flash: [] });
    const url = `${location.origin}/replay/${encodeURIComponent(this.name)}${query({ step, seat: this.seat })}`;
    this.share.value = url;
    history.replaceState({}, "", url);
    clear(this.screen.logBox);
    const from = Math.max(0, step - 80);
    for (let i = from; i <= step; i++) {
      const now = i === step ? " now" : "";
      if (i > 0 && !sum.lines[i].length) {
        this.screen.logLine(`${seatName(sum.agents, sum.positions[i - 1].mover)}: ${sum.moves[i - 1]}`, `move${now}`, sum.positions[i - 1].mover);
      }
      for (const line of sum.lines[i]) this.screen.logLine(line.text, `${line.tone}${now}`, line.seat);
    }
    this.screen.scrollLog();
    this.analysis.over = view.terminal;
    this.analysis.moved(sum.positions, step);
    this.analysis.policy({ step }).catch(showError);
  }
}
