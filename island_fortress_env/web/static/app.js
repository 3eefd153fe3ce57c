// Island Fortress in the browser: the start page, play, watch, replay, leaderboard.
// Every position comes from the server as the viewer's seat may see it.
import { ApiError, get, post, query, upload } from "./api.js";
import { MARKS, ROLE_NAMES, SEAT_COLOURS, boardSvg, playersEl } from "./board.js";
import { chartSvg } from "./chart.js";
import { clear, h, sleep, toast } from "./dom.js";

let config = null;
let page = null; // the current page: {dispose()}
const app = () => document.getElementById("app");

// ------------------------------------------------------------------ routing

export function navigate(path) {
  history.pushState({}, "", path);
  route();
}

function route() {
  if (page) page.dispose();
  page = null;
  const path = decodeURIComponent(location.pathname);
  const params = new URLSearchParams(location.search);
  let match;
  if ((match = path.match(/^\/play\/([^/]+)$/))) page = new LivePage(match[1], "play");
  else if ((match = path.match(/^\/watch\/([^/]+)$/))) page = new LivePage(match[1], "watch");
  else if ((match = path.match(/^\/replay\/([^/]+)$/))) page = new ReplayPage(match[1], params);
  else if (path === "/leaderboard") page = new LeaderboardPage();
  else page = new HomePage();
  page.start().catch(showError);
}

function showError(error) {
  const message = error instanceof ApiError ? error.message : String(error);
  toast(message, 6000);
  console.error(error);
}

function seatName(names, seat) {
  return `${MARKS[seat]} (${names[seat]})`;
}

function dot(seat) {
  return h("span", { class: "seat-dot", style: { background: SEAT_COLOURS[seat] } });
}

// ------------------------------------------------------------------ start page

class HomePage {
  constructor() {
    this.disposed = false;
  }
  dispose() {
    this.disposed = true;
  }
  agentSelect(name, value) {
    return h("select", { name }, config.agents.map((a) => h("option", { value: a, selected: a === value, text: a })));
  }
  async start() {
    const root = clear(app());
    const defaultAgent = config.agents.includes("heuristic") ? "heuristic" : config.agents[0];
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
      clear(opponents);
      for (let i = 0; i < n; i++) {
        if (i === Number(seat.value)) continue;
        opponents.append(h("div", { class: "form-row" }, h("label", { text: `seat ${MARKS[i]}` }),
          this.agentSelect(`opponent-${i}`, defaultAgent)));
      }
    };
    players.addEventListener("change", refresh);
    seat.addEventListener("change", refresh);
    refresh();
    const seed = h("input", { id: "play-seed", type: "number", min: 0, placeholder: "random", style: { width: "8em" } });
    const startPlay = h("button", { id: "start-play", type: "button", text: "Start the game" });
    startPlay.addEventListener("click", async () => {
      const body = {
        players: Number(players.value),
        seat: Number(seat.value),
        opponents: [...opponents.querySelectorAll("select")].map((s) => s.value),
      };
      if (seed.value !== "") body.seed = Number(seed.value);
      try {
        const game = await post("/api/play", body);
        sessionStorage.setItem(`if-token-${game.id}`, game.token);
        navigate(`/play/${game.id}`);
      } catch (e) {
        showError(e);
      }
    });
    // Watch
    const wPlayers = h("select", { id: "watch-players" }, config.players.map((n) =>
      h("option", { value: n, selected: n === 3, text: `${n} players` })));
    const wAgents = h("div", {});
    const wRefresh = () => {
      clear(wAgents);
      for (let i = 0; i < Number(wPlayers.value); i++) {
        wAgents.append(h("div", { class: "form-row" }, h("label", { text: `seat ${MARKS[i]}` }),
          this.agentSelect(`agent-${i}`, defaultAgent)));
      }
    };
    wPlayers.addEventListener("change", wRefresh);
    wRefresh();
    const startWatch = h("button", { id: "start-watch", type: "button", text: "Watch them play" });
    startWatch.addEventListener("click", async () => {
      try {
        const game = await post("/api/watch", { agents: [...wAgents.querySelectorAll("select")].map((s) => s.value) });
        sessionStorage.setItem(`if-token-${game.id}`, game.token);
        navigate(`/watch/${game.id}`);
      } catch (e) {
        showError(e);
      }
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
    root.append(h("div", { class: "cards" },
      h("section", { class: "card" }, h("h2", { text: "Play" }),
        h("p", { class: "muted", text: "You against agents. Click on the table to choose; only legal choices are clickable." }),
        h("div", { class: "form-row" }, h("label", { text: "table" }), players),
        h("div", { class: "form-row" }, h("label", { text: "your seat" }), seat),
        opponents,
        h("div", { class: "form-row" }, h("label", { text: "seed" }), seed),
        startPlay),
      h("section", { class: "card" }, h("h2", { text: "Watch" }),
        h("p", { class: "muted", text: "Agents against agents, with speed, pause and step." }),
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
    const table = h("table", { class: "list" }, h("tr", {}, h("th", { text: "game" }), h("th", { text: "agents" }),
      h("th", { class: "num", text: "scores" })));
    for (const r of records.slice(0, 200)) {
      const agents = r.agents.map((a, i) => `${MARKS[i]} ${a}${r.winners.includes(i) ? " ★" : ""}`).join(", ");
      const link = h("a", { href: `/replay/${encodeURIComponent(r.name)}`, "data-nav": true, text: r.name });
      table.append(h("tr", {}, h("td", {}, link), h("td", { text: agents }), h("td", { class: "num", text: r.scores.join(" / ") })));
    }
    list.append(table, ...notes);
  }
}

// ------------------------------------------------------------------ the game screen (shared)

class Screen {
  constructor() {
    this.status = h("p", { class: "status" });
    this.sub = h("p", { class: "substatus" });
    this.board = h("div", { class: "board-wrap" });
    this.players = h("div", {});
    this.side = h("div", { class: "side" });
    this.logBox = h("div", { class: "log", id: "log" });
    this.analysisBox = h("div", {});
    clear(app()).append(h("div", { class: "game" },
      h("div", {}, this.status, this.sub, this.board, this.players),
      this.side));
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
  scrollLog() {
    this.logBox.scrollTop = this.logBox.scrollHeight;
  }
}

function turnStarts(positions) {
  const out = [];
  positions.forEach((p, i) => {
    const prev = positions[i - 1];
    if (i === 0 || !prev || p.mover !== prev.mover || p.round !== prev.round || i === positions.length - 1) out.push(i);
  });
  return out;
}

// The analysis panel: a checkpoint's top actions, and the chances to win over the game.
class Analysis {
  constructor({ players, names, jobPath, jobBody, policyPath, onPick }) {
    this.players = players;
    this.names = names;
    this.jobPath = jobPath;
    this.jobBody = jobBody;
    this.policyPath = policyPath;
    this.onPick = onPick;
    this.points = [];
    this.total = 0;
    this.now = 0;
    this.job = null;
    this.disposed = false;
    this.el = h("section", { class: "panel", id: "analysis" }, h("h3", { text: "Analysis" }));
    this.playout = h("select", { id: "playout" }, config.playouts.map((p) => h("option", { value: p, text: `${p} playouts` })));
    this.rollouts = h("input", { id: "rollouts", type: "number", min: 1, max: config.max_rollouts, value: 32, style: { width: "5em" } });
    this.playout.addEventListener("change", () => {
      this.rollouts.value = this.playout.value === "random" ? 32 : 4;
    });
    this.estimate = h("button", { id: "estimate", type: "button", text: "Estimate chances" });
    this.estimate.addEventListener("click", () => this.run(this.lastPositions).catch(showError));
    this.follow = h("input", { type: "checkbox", id: "follow" });
    this.method = h("p", { class: "muted", id: "method", text: "Chances to win: not estimated yet." });
    this.chart = h("div", {});
    this.legend = h("div", { class: "legend" }, names.map((n, i) => h("span", {}, dot(i), `${MARKS[i]} ${n}`)));
    this.el.append(h("div", { class: "controls" }, this.playout, h("label", {}, "rollouts ", this.rollouts), this.estimate),
      h("div", { class: "controls" }, h("label", {}, this.follow, " keep estimating as the game goes")),
      this.chart, this.legend, this.method);
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
  draw() {
    clear(this.chart).append(chartSvg(this.points, { players: this.players, total: this.total, now: this.now, onPick: this.onPick }));
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
  async policy(params) {
    this.policyQuery = params;
    if (!this.policyBox) return;
    clear(this.policyBox);
    if (!this.showPolicy.checked || !params) return;
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

// A person's choice: the decision panel lists what is not on the table (counts, the bid, the
// role cards' actions with their costs and why some are refused) and what is clicked on it.
class DecisionPanel {
  constructor(onAct) {
    this.onAct = onAct;
    this.el = h("section", { class: "panel decision", id: "decision" });
    this.menu = null;
    this.picked = null;
  }
  choiceButton(c, extra = "") {
    const b = h("button", { type: "button", class: `choice ${extra}`, "data-action": c.action },
      c.label, c.cost ? h("span", { class: "cost", text: c.cost }) : null);
    b.addEventListener("click", () => this.onAct(c.action));
    return b;
  }
  pick(choices, where) {
    if (choices.length === 1) {
      this.onAct(choices[0].action);
      return;
    }
    this.menu = { choices, where };
    this.render(this.view, this.waiting);
  }
  prison(region, view) {
    if (this.picked === null || this.picked === region) {
      this.picked = this.picked === region ? null : region;
      this.render(view, true);
      this.redraw();
      return;
    }
    const [a, b] = [Math.min(this.picked, region), Math.max(this.picked, region)];
    const choice = view.choices.find((c) => c.kind === "prisons" && c.value === a && c.other === b);
    this.picked = null;
    if (choice) this.onAct(choice.action);
  }
  render(view, waiting, thinking = "") {
    this.view = view;
    this.waiting = waiting;
    const el = clear(this.el);
    if (view.terminal) {
      el.append(h("h3", { text: "Game over" }), h("p", { text: view.status }));
      return;
    }
    if (!waiting) {
      el.append(h("h3", { text: "Waiting" }), h("p", { text: thinking || view.pending }));
      return;
    }
    el.append(h("h3", { text: "Your move" }), h("p", { id: "pending", text: view.pending }));
    if (this.menu) {
      el.append(h("p", { text: `${this.menu.where}: choose one` }),
        h("div", { class: "choices", id: "menu" }, this.menu.choices.map((c) => this.choiceButton(c))));
      const cancel = h("button", { type: "button", text: "cancel" });
      cancel.addEventListener("click", () => {
        this.menu = null;
        this.render(view, waiting);
      });
      el.append(cancel);
      return;
    }
    const kinds = new Set(view.choices.map((c) => c.kind));
    const list = h("div", { class: "choices" });
    el.append(list);
    const byKind = (k) => view.choices.filter((c) => c.kind === k);
    if (kinds.has("role") || kinds.has("repeat") || view.refusals.length) {
      for (let card = 0; card < 5; card++) {
        const options = byKind("role").filter((c) => config.ops[c.value].card === card);
        const refused = view.refusals.filter((r) => r.kind === "role" && config.ops[r.op].card === card);
        if (!options.length && !refused.length) continue;
        const group = h("div", { class: "role-group" }, h("h4", { text: ROLE_NAMES[card] }));
        for (const c of options) group.append(this.choiceButton({ ...c, label: `${config.ops[c.value].letter} ${c.label}` }));
        for (const r of refused) {
          group.append(h("button", { type: "button", class: "choice refused", disabled: true, title: r.reason },
            `${config.ops[r.op].letter} ${r.label}`, h("span", { class: "cost", text: `refused: ${r.reason}` })));
        }
        list.append(group);
      }
      const repeats = byKind("repeat");
      const refusedRepeats = view.refusals.filter((r) => r.kind === "repeat");
      if (repeats.length || refusedRepeats.length) {
        const group = h("div", { class: "role-group" }, h("h4", { text: "Taskmaster B: repeat a card on the table" }));
        for (const c of repeats) group.append(this.choiceButton(c));
        for (const r of refusedRepeats) {
          group.append(h("button", { type: "button", class: "choice refused", disabled: true, title: r.reason },
            r.label, h("span", { class: "cost", text: `refused: ${r.reason}` })));
        }
        list.append(group);
      }
    }
    const bids = byKind("bid").sort((a, b) => a.value - b.value);
    if (bids.length) {
      const slider = h("input", { type: "range", id: "bid", min: 0, max: bids.length - 1, value: 0 });
      const seal = h("button", { type: "button", id: "seal-bid", class: "choice" });
      const show = () => {
        const c = bids[Number(slider.value)];
        seal.textContent = `Seal a bid of ${c.value} Jade`;
        seal.setAttribute("data-action", c.action);
      };
      slider.addEventListener("input", show);
      seal.addEventListener("click", () => this.onAct(bids[Number(slider.value)].action));
      show();
      list.append(h("p", { text: "Your sealed bid (the others see only that you bid):" }), h("div", { class: "bid-row" }, slider, seal));
    }
    for (const c of byKind("option")) list.append(this.choiceButton(c));
    const onTable = [["cell", "Click a highlighted cell of the wall."], ["governor", "You may place the Governor block on a highlighted cell."],
      ["favor", "Click a highlighted favor card."], ["region", "Click the camp of the region to move to."],
      ["prisons", this.picked === null ? "Click two prisons for the Convicts." : `Prison of region ${this.picked + 1} picked: click the other.`]];
    for (const [kind, hint] of onTable) {
      const items = byKind(kind);
      if (!items.length) continue;
      const details = h("details", {}, h("summary", { text: `or choose from the list (${items.length})` }),
        h("div", { class: "choices" }, items.map((c) => this.choiceButton(c))));
      list.append(h("p", { text: hint }), details);
    }
  }
}

// A live game: play (a person's seat) or watch (agents only).
class LivePage {
  constructor(id, kind) {
    this.id = id;
    this.kind = kind;
    this.disposed = false;
    this.busy = false;
    this.positions = [];
    this.flash = [];
  }
  dispose() {
    this.disposed = true;
    if (this.analysis) this.analysis.dispose();
  }
  async start() {
    this.token = sessionStorage.getItem(`if-token-${this.id}`);
    if (!this.token) {
      clear(app()).append(h("p", { class: "error", text: "This game belongs to the browser tab that started it: its moves and hand are private to it." }),
        h("a", { href: "/", "data-nav": true, text: "Start a game" }));
      return;
    }
    const snap = await get(`/api/games/${this.id}${query({ token: this.token, since: 0 })}`);
    this.screen = new Screen();
    this.names = snap.names;
    const side = this.screen.side;
    if (this.kind === "play") {
      this.decision = new DecisionPanel((action) => this.act(action));
      this.decision.redraw = () => this.draw();
      this.pause = h("input", { type: "range", id: "pause", min: 0, max: 3000, step: 100, value: 700 });
      const pauseText = h("span", { text: "0.7 s" });
      this.pause.addEventListener("input", () => {
        pauseText.textContent = `${(this.pause.value / 1000).toFixed(1)} s`;
      });
      side.append(this.decision.el, h("section", { class: "panel" }, h("h3", { text: "Opponents" }),
        h("div", { class: "controls" }, h("label", { text: "pause after each of their moves " }), this.pause, pauseText)));
    } else {
      this.playing = false;
      this.speed = h("input", { type: "range", id: "speed", min: 1, max: 50, value: 4 });
      const speedText = h("span", { text: "4 moves/s" });
      this.speed.addEventListener("input", () => {
        speedText.textContent = `${this.speed.value} moves/s`;
      });
      this.playButton = h("button", { type: "button", id: "play-pause", text: "▶ Play" });
      this.playButton.addEventListener("click", () => this.toggle());
      const step = h("button", { type: "button", id: "step", text: "Step" });
      step.addEventListener("click", () => this.stepOnce().catch(showError));
      side.append(h("section", { class: "panel" }, h("h3", { text: "Watch" }),
        h("div", { class: "controls" }, this.playButton, step, h("label", {}, "speed ", this.speed), speedText)));
    }
    this.analysis = new Analysis({
      players: snap.names.length, names: snap.names,
      jobPath: `/api/games/${this.id}/analysis`, jobBody: () => ({ token: this.token }),
      policyPath: `/api/games/${this.id}/policy`, onPick: null,
    });
    this.recordLink = h("p", {});
    side.append(this.analysis.el, h("section", { class: "panel" }, h("h3", { text: "What happened" }), this.screen.logBox), this.recordLink);
    for (const line of snap.opening || []) this.screen.logLine(line.text, line.tone, line.seat);
    this.absorb(snap);
    if (this.kind === "play") this.runOpponents().catch(showError);
  }
  absorb(snap) {
    const before = snap.step - snap.moves.length;
    this.positions = this.positions.slice(0, before).concat(snap.positions);
    this.flash = [];
    for (const m of snap.moves) {
      const who = seatName(this.names, m.seat);
      if (!m.hidden && (!m.lines.length || (m.auto && m.seat === snap.seat))) {
        this.screen.logLine(`${who}: ${m.text}${m.auto ? " (the only choice)" : ""}`, "move", m.seat);
      }
      for (const line of m.lines) this.screen.logLine(line.text, line.tone, line.seat);
      this.flash.push(...m.cells);
    }
    this.screen.scrollLog();
    this.snap = snap;
    this.draw();
    this.analysis.moved(this.positions, snap.step);
    // The checkpoint's view: of your own move only when you play; of every move when you watch.
    const policyHere = this.kind === "watch" || snap.waiting;
    if (!snap.over) this.analysis.policy(policyHere ? { token: this.token } : null).catch(showError);
    if (snap.record) {
      clear(this.recordLink).append("Saved as ", h("a", { href: `/replay/${encodeURIComponent(snap.record)}`, "data-nav": true, text: snap.record }));
    }
  }
  draw() {
    const snap = this.snap;
    const view = snap.view;
    this.screen.status.textContent = view.headline;
    this.screen.sub.textContent = this.kind === "play" ? `You are ${seatName(this.names, snap.seat)}.` : "Agents play every seat; every hand is shown.";
    const mine = this.kind === "play" && snap.waiting;
    document.body.dataset.step = snap.step;
    document.body.dataset.waiting = mine ? "yes" : "no";
    const d = this.decision;
    this.screen.draw(view, {
      choices: mine ? view.choices : [],
      onPick: mine ? (choices, where) => d.pick(choices, where) : null,
      onPrison: mine ? (region) => d.prison(region, view) : null,
      ops: config.ops,
      picked: d ? d.picked : null,
      flash: this.flash,
    });
    if (d) d.render(view, mine, snap.over ? "" : `${seatName(this.names, view.to_move)} is thinking…`);
  }
  async act(action) {
    if (this.busy) return;
    this.busy = true;
    this.decision.menu = null;
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
  async runOpponents() {
    while (!this.disposed && !this.snap.waiting && !this.snap.over) {
      const pause = Number(this.pause.value);
      const snap = await post(`/api/games/${this.id}/advance`, { token: this.token, moves: pause === 0 ? 50 : 1 });
      if (this.disposed) return;
      this.absorb(snap);
      if (pause && !snap.waiting) await sleep(pause);
    }
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

// ------------------------------------------------------------------ replay

class ReplayPage {
  constructor(name, params) {
    this.name = name;
    this.step = Math.max(0, Number(params.get("step") || 0) || 0);
    this.seat = params.get("seat") === null || params.get("seat") === "" ? null : Number(params.get("seat"));
    this.disposed = false;
    this.token = 0;
  }
  dispose() {
    this.disposed = true;
    if (this.analysis) this.analysis.dispose();
    document.removeEventListener("keydown", this.keys);
  }
  async start() {
    this.summary = await get(`/api/records/${encodeURIComponent(this.name)}${query({ seat: this.seat })}`);
    const sum = this.summary;
    this.step = Math.min(this.step, sum.total);
    this.turns = turnStarts(sum.positions);
    this.screen = new Screen();
    const side = this.screen.side;
    const button = (text, id, fn) => {
      const b = h("button", { type: "button", id, text });
      b.addEventListener("click", fn);
      return b;
    };
    this.slider = h("input", { type: "range", id: "step-slider", min: 0, max: sum.total, value: this.step, style: { width: "100%" } });
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
      const seat = seatSelect.value === "" ? "" : seatSelect.value;
      navigate(`/replay/${encodeURIComponent(this.name)}${query({ step: this.step, seat })}`);
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
    this.where = h("p", { id: "where" });
    side.append(h("section", { class: "panel" }, h("h3", { text: `Replay: ${sum.name}` }),
      h("div", { class: "controls" },
        button("First", "first", () => this.go(0)),
        button("◀ turn", "prev-turn", () => this.go([...this.turns].reverse().find((t) => t < this.step) ?? 0)),
        button("◀", "prev", () => this.go(this.step - 1)),
        button("▶", "next", () => this.go(this.step + 1)),
        button("turn ▶", "next-turn", () => this.go(this.turns.find((t) => t > this.step) ?? sum.total)),
        button("Last", "last", () => this.go(sum.total))),
      this.slider, h("div", { class: "controls" }, this.roundSelect, seatSelect), this.where,
      h("div", { class: "controls" }, this.share, copy)));
    this.analysis = new Analysis({
      players: sum.players, names: sum.agents,
      jobPath: `/api/records/${encodeURIComponent(this.name)}/analysis`, jobBody: () => ({ seat: this.seat }),
      policyPath: `/api/records/${encodeURIComponent(this.name)}/policy`, onPick: (step) => this.go(step),
    });
    side.append(this.analysis.el, h("section", { class: "panel" }, h("h3", { text: "What happened" }), this.screen.logBox));
    this.keys = (event) => {
      if (event.target.tagName === "INPUT" && event.target.type !== "range") return;
      if (event.key === "ArrowRight") this.go(this.step + 1);
      if (event.key === "ArrowLeft") this.go(this.step - 1);
    };
    document.addEventListener("keydown", this.keys);
    await this.go(this.step);
    this.analysis.moved(sum.positions, this.step);
  }
  async go(step) {
    const sum = this.summary;
    step = Math.max(0, Math.min(sum.total, step));
    this.step = step;
    const ticket = ++this.token;
    const data = await get(`/api/records/${encodeURIComponent(this.name)}/steps/${step}${query({ seat: this.seat })}`);
    if (this.disposed || ticket !== this.token) return;
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
    const flash = [];
    this.screen.draw(view, { flash });
    const url = `${location.origin}/replay/${encodeURIComponent(this.name)}${query({ step, seat: this.seat })}`;
    this.share.value = url;
    history.replaceState({}, "", url);
    const log = clear(this.screen.logBox);
    const from = Math.max(0, step - 60);
    for (let i = from; i <= step; i++) {
      const now = i === step ? " now" : "";
      if (i > 0 && !sum.lines[i].length) {
        this.screen.logLine(`${seatName(sum.agents, sum.positions[i - 1].mover)}: ${sum.moves[i - 1]}`, `move${now}`, sum.positions[i - 1].mover);
      }
      for (const line of sum.lines[i]) this.screen.logLine(line.text, `${line.tone}${now}`, line.seat);
    }
    log.scrollTop = log.scrollHeight;
    if (this.analysis) {
      this.analysis.moved(sum.positions, step);
      this.analysis.policy({ step }).catch(showError);
    }
  }
}

// ------------------------------------------------------------------ leaderboard

class LeaderboardPage {
  dispose() {}
  async start() {
    const root = clear(app());
    const data = await get("/api/leaderboard");
    root.append(h("h2", { text: "Leaderboard" }),
      h("p", { class: "muted", text: "From the evaluation results in the games directory: island-fortress evaluate A B C --games 201 --json > DIR/eval-NAME.json. Win rates with their 95% Wilson intervals; OpenSkill ratings when more than two kinds of agent played." }));
    if (!data.tables.length) root.append(h("p", { text: "No evaluation results found in the games directory." }));
    for (const t of data.tables) {
      const table = h("table", { class: "list" }, h("tr", {}, ["agent", "games", "wins", "win rate", "95% interval", "mean score", "rating (μ ± σ)"].map((c, i) =>
        h("th", { class: i ? "num" : "", text: c }))));
      for (const a of t.agents) {
        const rating = a.rating ? `${a.rating.mu.toFixed(2)} ± ${a.rating.sigma.toFixed(2)}` : "—";
        table.append(h("tr", {}, h("td", { text: a.name, title: a.spec }), h("td", { class: "num", text: a.games }),
          h("td", { class: "num", text: a.wins }), h("td", { class: "num", text: `${(100 * a.win_rate).toFixed(1)}%` }),
          h("td", { class: "num", text: `${(100 * a.ci95[0]).toFixed(1)}–${(100 * a.ci95[1]).toFixed(1)}%` }),
          h("td", { class: "num", text: a.mean_score.toFixed(1) }), h("td", { class: "num", text: rating })));
      }
      root.append(h("section", { class: "card", style: { marginBottom: "12px" } },
        h("h3", { text: `${t.file}: ${t.players} players, ${t.games} games${t.seed !== null ? `, seed ${t.seed}` : ""}; chance share ${(100 / t.players).toFixed(1)}%` }), table));
    }
    for (const s of data.skipped) root.append(h("p", { class: "muted", text: `${s.file} skipped: ${s.reason}` }));
  }
}

// ------------------------------------------------------------------ start

function rulesDialog() {
  const body = document.getElementById("rules-body");
  for (const section of config.rules) {
    body.append(h("h3", { text: section.title }), h("ul", {}, section.lines.map((line) => h("li", { text: line }))));
  }
  const dialog = document.getElementById("rules");
  document.getElementById("rules-button").addEventListener("click", () => dialog.showModal());
}

async function main() {
  config = await get("/api/config");
  rulesDialog();
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-nav]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    navigate(link.getAttribute("href"));
  });
  window.addEventListener("popstate", route);
  route();
}

main().catch(showError);
