// A live game: play (your seat against bots, with the action bar, the recap, undo until you
// confirm the end of your turn, the first-game guide and the end screen) or watch (bots only,
// with play, pause, step and speed).
import { get, post, query } from "./api.js";
import { Analysis } from "./analysis.js";
import { ActionBar } from "./bar.js";
import { clear, h, sleep, toast } from "./dom.js";
import { startGame } from "./home.js";
import { Guide } from "./guide.js";
import { RecapPanel, endScreen } from "./recap.js";
import { Screen } from "./screen.js";
import { navigate, seatName, shared, showError, showFailure, tokens } from "./shared.js";

export class LivePage {
  constructor(id, kind) {
    this.id = id;
    this.kind = kind;
    this.disposed = false;
    this.busy = false;
    this.run = 0; // the bots' run under way; an undo or a new run stops the older one
    this.positions = [];
    this.flash = [];
  }
  dispose() {
    this.disposed = true;
    if (this.analysis) this.analysis.dispose();
    if (this.screen) this.screen.dispose();
    if (this.guide) this.guide.dispose();
  }
  async start() {
    this.token = tokens.get(this.id);
    if (!this.token) {
      // A link opened where the game's token is not known: a finished game opens as its replay.
      const known = await get(`/api/games/${encodeURIComponent(this.id)}/public`);
      if (known.over && known.record) {
        history.replaceState({}, "", `/replay/${encodeURIComponent(known.record)}`);
        shared.route();
        return;
      }
      showFailure(new Error("This game is being played in another browser: its moves and hands are private to it. Its replay opens here once it is over."),
        "Not a game of this browser");
      return;
    }
    const snap = await get(`/api/games/${this.id}${query({ token: this.token, since: 0 })}`);
    if (this.disposed) return;
    this.setup(snap);
    if (this.kind === "play") this.runOpponents().catch(showError);
  }
  setup(snap) {
    this.screen = new Screen();
    this.names = snap.names;
    if (this.kind === "play") {
      this.bar = new ActionBar(this.screen.bar, {
        onAct: (action) => this.act(action),
        onUndo: () => this.undo(),
        onEnd: () => this.showEnd(),
        onEndTurn: () => this.endTurn(),
        holding: () => this.holding,
        redraw: () => this.draw(),
      });
      this.recap = new RecapPanel(this.screen.recapBox);
      this.guide = new Guide(snap.guide || {});
    } else {
      this.watchBar();
    }
    this.analysis = new Analysis({
      players: snap.names.length, names: snap.names, open: this.kind === "watch",
      jobPath: `/api/games/${this.id}/analysis`, jobBody: () => ({ token: this.token }),
      policyPath: `/api/games/${this.id}/policy`, onPick: null,
    });
    this.screen.analysisSlot.append(this.analysis.el);
    this.load(snap);
    if (this.guide) this.guide.firstTime();
  }
  // A whole game from its start (the first answer, and after an undo).
  load(snap) {
    this.released = false;
    this.screen.clearLog();
    for (const line of snap.opening || []) this.screen.logLine(line.text, line.tone, line.seat);
    this.positions = [];
    if (this.analysis && this.generation !== undefined && snap.generation !== this.generation) this.analysis.reset();
    this.generation = snap.generation;
    this.absorb(snap);
  }
  absorb(snap) {
    const before = snap.step - snap.moves.length;
    this.positions = this.positions.slice(0, before).concat(snap.positions);
    this.flash = [];
    for (const m of snap.moves) {
      const who = seatName(this.names, m.seat);
      // Your own moves the others see less of (a card kept, a bid) are told in your words too.
      if (!m.hidden && (!m.lines.length || (m.auto && m.seat === snap.seat) || m.private)) {
        const why = m.why ? `: ${m.why}` : "";
        this.screen.logLine(`${who}: ${m.text}${m.auto ? ` (the only choice${why})` : ""}`, "move", m.seat);
      }
      for (const line of m.lines) this.screen.logLine(line.text, line.tone, line.seat);
      this.flash.push(...m.cells);
    }
    this.screen.scrollLog();
    this.snap = snap;
    // A decision of yours that another seat answers next waits for your confirmation.
    this.holding = Boolean(snap.handover) && !this.released;
    this.draw();
    this.analysis.moved(this.positions, snap.step);
    // The checkpoint's view: of your own move only when you play; of every move when you watch;
    // nothing once the game is over.
    this.analysis.over = snap.over;
    const policyHere = !snap.over && (this.kind === "watch" || snap.waiting);
    this.analysis.policy(policyHere ? { token: this.token } : null).catch(showError);
    if (snap.over && !this.endShown) {
      this.endShown = true;
      if (this.kind === "play") this.showEnd();
    }
  }
  draw() {
    const snap = this.snap;
    const view = snap.view;
    this.screen.status.textContent = view.headline;
    const sub = clear(this.screen.sub);
    sub.append(this.kind === "play" ? `You are ${seatName(this.names, snap.seat)}.` : "Bots play every seat; every hand is shown.");
    if (snap.record) {
      sub.append(" Saved as ", h("a", { href: `/replay/${encodeURIComponent(snap.record)}`, "data-nav": true, id: "record-link", text: snap.record }), ".");
    }
    const mine = this.kind === "play" && snap.waiting;
    document.body.dataset.step = snap.step;
    document.body.dataset.waiting = mine ? "yes" : "no";
    const bar = this.bar;
    if (this.recap) this.recap.render(snap.recap, this.names);
    this.screen.drawScore(snap.if_ended, this.names);
    this.screen.draw(view, {
      ifEnded: snap.if_ended,
      choices: mine ? view.choices : [],
      onPick: mine ? (choices, where) => bar.pick(choices, where) : null,
      onPrison: mine ? (region) => bar.prison(region) : null,
      ops: shared.config.ops,
      picked: bar ? bar.picked : null,
      flash: this.flash,
      recent: this.recap ? this.recap.recentCells(snap.seat) : {},
    });
    if (bar) bar.render(snap, snap.over ? "" : `${seatName(this.names, view.to_move)} is thinking…`);
    else this.renderWatchBar();
  }
  showEnd() {
    const snap = this.snap;
    const name = snap.record ? encodeURIComponent(snap.record) : null;
    endScreen(snap, {
      onRematch: () => {
        const others = snap.specs.filter((_, i) => i !== snap.seat);
        const body = this.kind === "play" ? { players: snap.specs.length, seat: snap.seat, opponents: others } : { agents: snap.specs };
        startGame(this.kind, body).catch(showError);
      },
      onReplay: () => navigate(`/replay/${name}`),
      onAnalyse: () => navigate(`/replay/${name}?analyse=1`),
    });
  }
  async act(action) {
    if (this.busy) return;
    this.busy = true;
    this.bar.menu = null;
    this.released = false;
    try {
      const snap = await post(`/api/games/${this.id}/act`, { token: this.token, action });
      this.absorb(snap);
    } catch (e) {
      showError(e);
    } finally {
      this.busy = false;
    }
    await this.runOpponents();
  }
  async undo() {
    if (this.busy) return;
    this.busy = true;
    this.run++; // the bots wait: nothing more is asked of them until the position is back
    this.bar.menu = null;
    try {
      this.load(await post(`/api/games/${this.id}/undo`, { token: this.token }));
      toast("Your last decision is taken back.");
    } catch (e) {
      showError(e);
      this.load(await get(`/api/games/${this.id}${query({ token: this.token, since: 0 })}`));
    } finally {
      this.busy = false;
    }
    await this.runOpponents();
  }
  // You confirm the end of your turn (or a decision another seat answers next): the bots play.
  async endTurn() {
    if (this.busy || !this.holding) return;
    this.holding = false;
    this.released = true; // until your next decision: your forced moves after it do not ask again
    this.draw();
    await this.runOpponents();
  }
  // The bots play up to your next choice; a decision of yours waits for your confirmation first
  // (`handover`), so that undo stays open until you end your turn.
  async runOpponents() {
    const run = ++this.run;
    while (!this.disposed && run === this.run && !this.snap.waiting && !this.snap.over && !this.holding) {
      const pause = Number(this.bar.pause.value);
      const snap = await post(`/api/games/${this.id}/advance`, { token: this.token, moves: pause === 0 ? 50 : 1 });
      if (this.disposed || run !== this.run) return;
      this.absorb(snap);
      if (pause && !snap.waiting) await sleep(pause);
    }
  }

  // ------------------------------------------------------------------ watch

  watchBar() {
    const el = this.screen.bar;
    el.classList.add("action-bar");
    this.playing = false;
    this.speed = h("input", { type: "range", id: "speed", min: 1, max: 50, value: 4 });
    this.speedText = h("span", { text: "4 moves/s" });
    this.speed.addEventListener("input", () => {
      this.speedText.textContent = `${this.speed.value} moves/s`;
    });
    this.playButton = h("button", { type: "button", id: "play-pause", class: "primary", text: "▶ Play" });
    this.playButton.addEventListener("click", () => this.toggle());
    const step = h("button", { type: "button", id: "step", text: "Step" });
    step.addEventListener("click", () => this.stepOnce().catch(showError));
    this.endButton = h("button", { type: "button", id: "show-end", text: "Scores, hands and what next" });
    this.endButton.addEventListener("click", () => this.showEnd());
    this.watchStatus = h("span", { class: "muted" });
    el.append(h("section", { class: "bar-main", id: "decision" }, h("div", { class: "prompt" }, h("h3", { text: "Watch" }), this.watchStatus),
      h("div", { class: "controls" }, this.playButton, step, h("label", {}, "speed ", this.speed), this.speedText, this.endButton)));
  }
  renderWatchBar() {
    this.watchStatus.textContent = this.snap.view.pending;
    this.endButton.hidden = !this.snap.over;
  }
  toggle() {
    this.playing = !this.playing;
    this.playButton.textContent = this.playing ? "❚❚ Pause" : "▶ Play";
    if (this.playing) this.loop().catch(showError);
  }
  async stepOnce() {
    if (this.busy || this.snap.over) return;
    this.busy = true;
    try {
      this.absorb(await post(`/api/games/${this.id}/advance`, { token: this.token, moves: 1 }));
    } finally {
      this.busy = false;
    }
  }
  async loop() {
    while (this.playing && !this.disposed && !this.snap.over) {
      const speed = Number(this.speed.value);
      const batch = speed > 20 ? Math.round(speed / 10) : 1;
      this.busy = true;
      try {
        this.absorb(await post(`/api/games/${this.id}/advance`, { token: this.token, moves: batch }));
      } finally {
        this.busy = false;
      }
      await sleep((1000 * batch) / speed);
    }
    if (this.snap.over && this.playing) this.toggle();
  }
}
