// The action bar, always on screen at the bottom of a game you play: what is asked and your
// choices (or the bid, a slider and a number field) with their costs, the role actions you cannot
// take folded away, notes on the decision, undo, and the end of your turn to confirm before the
// bots play; beside it your own seat (resources, where you stand in the round, every card of your
// favor hand with how far its pattern is on the wall). A choice that loses something or ends the
// game asks first (a confirmation).
import { ROLE_NAMES, SEAT_COLOURS, SEAT_TEXT, favorEl } from "./board.js";
import { clear, h } from "./dom.js";
import { dot, shared } from "./shared.js";

export class ActionBar {
  // hooks: {onAct(action), onUndo(), onEnd(), onEndTurn(), redraw()}
  constructor(el, hooks) {
    this.el = el;
    this.hooks = hooks;
    this.menu = null;
    this.picked = null;
    this.main = h("section", { class: "bar-main", id: "decision", "aria-label": "your move" });
    this.mine = h("section", { class: "bar-mine", id: "mine", "aria-label": "your seat" });
    this.pause = h("input", { type: "range", id: "pause", min: 0, max: 3000, step: 100, value: 700 });
    this.pauseText = h("span", { class: "muted", text: "0.7 s" });
    this.pause.addEventListener("input", () => {
      this.pauseText.textContent = `${(this.pause.value / 1000).toFixed(1)} s`;
    });
    this.pauseRow = h("label", { class: "pause small" }, "pause after each bot move ", this.pause, this.pauseText);
    this.undoButton = h("button", { type: "button", id: "undo", text: "↶ Undo", title: "take back your last decision" });
    this.undoButton.addEventListener("click", () => this.hooks.onUndo());
    this.endTurnButton = h("button", { type: "button", id: "end-turn", class: "primary", text: "✓ Confirm: let the others play" });
    this.endTurnButton.addEventListener("click", () => this.hooks.onEndTurn());
    clear(el).append(this.main, this.mine);
    el.classList.add("action-bar");
  }

  // ------------------------------------------------------------------ what can be clicked

  act(choice) {
    const warning = this.warnings[String(choice.action)];
    if (!warning) {
      this.hooks.onAct(choice.action);
      return;
    }
    confirmMove(choice, warning).then((yes) => {
      if (yes) this.hooks.onAct(choice.action);
    });
  }
  choiceButton(c, extra = "") {
    const warned = this.warnings[String(c.action)];
    const b = h("button", { type: "button", class: `choice ${extra}${warned ? " warned" : ""}`, "data-action": c.action,
      title: warned || c.cost || c.label }, c.label, c.cost ? h("span", { class: "cost", text: c.cost }) : null);
    b.addEventListener("click", () => this.act(c));
    return b;
  }
  // A click on the table: one choice is taken (or confirmed), several open a menu here.
  pick(choices, where) {
    if (choices.length === 1) {
      this.act(choices[0]);
      return;
    }
    this.menu = { choices, where };
    this.render(this.snap);
  }
  prison(region) {
    const view = this.snap.view;
    if (this.picked === null || this.picked === region) {
      this.picked = this.picked === region ? null : region;
      this.render(this.snap);
      this.hooks.redraw();
      return;
    }
    const [a, b] = [Math.min(this.picked, region), Math.max(this.picked, region)];
    const choice = view.choices.find((c) => c.kind === "prisons" && c.value === a && c.other === b);
    this.picked = null;
    if (choice) this.act(choice);
  }

  // ------------------------------------------------------------------ drawing

  render(snap, thinking = "") {
    this.snap = snap;
    this.warnings = (snap.waiting && snap.warnings) || {};
    this.renderMine(snap);
    const el = clear(this.main);
    const view = snap.view;
    if (snap.over) {
      const scores = h("button", { type: "button", id: "show-end", class: "primary", text: "Scores, hands and what next" });
      scores.addEventListener("click", () => this.hooks.onEnd());
      el.append(h("div", { class: "prompt" }, h("h3", { text: "Game over" }), h("span", { text: view.status })),
        h("div", { class: "controls" }, scores));
      return;
    }
    // Undo is offered while no other seat has answered your last decision; after a decision that
    // drew favor cards or revealed the sealed bids the server refuses it, and the button says why.
    this.undoButton.disabled = !snap.can_undo;
    this.undoButton.title = snap.can_undo ? "take back your last decision" : snap.undo_refused || "";
    const undo = snap.can_undo || snap.undo_refused ? this.undoButton : null;
    const tools = h("div", { class: "bar-tools" }, undo, this.pauseRow);
    if (snap.handover && this.hooks.holding()) {
      // Your last decision is answered by another seat next: it waits for your confirmation,
      // and until then Undo takes it back.
      el.append(h("div", { class: "prompt" }, h("h3", { text: "End your turn?" }), h("span", { id: "handover", text: snap.handover })),
        h("div", { class: "bar-tools" }, this.endTurnButton, this.undoButton, this.pauseRow));
      return;
    }
    if (!snap.waiting) {
      el.append(h("div", { class: "prompt" }, h("h3", { text: "Waiting" }), h("span", { text: thinking || view.pending })), tools);
      return;
    }
    el.append(h("div", { class: "prompt" }, h("h3", { text: "Your move" }), h("span", { id: "pending", text: view.pending })));
    for (const note of snap.notes || []) el.append(h("p", { class: "note", text: note }));
    if (this.menu) {
      const cancel = h("button", { type: "button", id: "menu-cancel", text: "cancel" });
      cancel.addEventListener("click", () => {
        this.menu = null;
        this.render(snap);
      });
      el.append(h("div", { class: "choices row", id: "menu" }, h("span", { text: `${this.menu.where}: choose one` }),
        this.menu.choices.map((c) => this.choiceButton(c)), cancel), tools);
      return;
    }
    el.append(this.choices(view), tools);
  }

  choices(view) {
    const config = shared.config;
    const byKind = (k) => view.choices.filter((c) => c.kind === k);
    const list = h("div", { class: "choices" });
    if (byKind("role").length || byKind("repeat").length) {
      const cards = h("div", { class: "role-cards" });
      for (let card = 0; card < 5; card++) {
        const options = byKind("role").filter((c) => config.ops[c.value].card === card);
        if (!options.length) continue;
        cards.append(h("div", { class: "role-group", "data-card": card }, h("h4", { text: ROLE_NAMES[card] }),
          options.map((c) => this.choiceButton({ ...c, label: `${config.ops[c.value].letter} ${c.label}` }))));
      }
      list.append(cards);
      // Taskmaster B's repeats: one compact row under the cards (their costs in the tooltip), so
      // that many of them never make the bar taller than a line or two.
      const repeats = byKind("repeat");
      if (repeats.length) {
        list.append(h("div", { class: "repeats choices row", id: "repeats" }, h("b", { class: "small", text: "Taskmaster B, repeat:" }),
          repeats.map((c) => this.choiceButton(c, "compact"))));
      }
    }
    if (view.refusals.length) {
      list.append(h("details", { class: "refused", id: "refused" },
        h("summary", { text: `Not possible now (${view.refusals.length})` }),
        h("ul", {}, view.refusals.map((r) => h("li", {}, h("b", {
          text: r.kind === "role" ? `${ROLE_NAMES[config.ops[r.op].card]} ${config.ops[r.op].letter} ${r.label}` : r.label,
        }), `: ${r.reason}`)))));
    }
    const bids = byKind("bid").sort((a, b) => a.value - b.value);
    if (bids.length) list.append(this.bidRow(bids));
    const options = byKind("option");
    if (options.length) list.append(h("div", { class: "choices row" }, options.map((c) => this.choiceButton(c))));
    const favors = byKind("favor");
    if (favors.length) {
      // The cards you choose from are shown here; the cards of your hand stay in your hand (right).
      const me = view.players[view.seat];
      const choosing = new Map((me.choosing || []).map((c) => [c.id, c]));
      const drawn = favors.filter((c) => choosing.has(c.value));
      if (drawn.length) {
        list.append(h("div", { class: "favors row", id: "bar-favors" }, drawn.map((c) =>
          favorEl(choosing.get(c.value), { choice: c, onPick: () => this.act(c) }))));
      }
      // The cards of your hand that can be played now are offered here too, so the one to click
      // is always in view (your whole hand is beside, on the right).
      const inHand = favors.filter((c) => !choosing.has(c.value));
      const hand = new Map((me.hand || []).map((c) => [c.id, c]));
      const progress = new Map((this.snap.hand || []).map((p) => [p.id, p]));
      if (inHand.length) {
        list.append(h("div", { class: "favors row", id: "bar-play" }, h("span", { class: "small", text: "Play one:" }),
          inHand.filter((c) => hand.has(c.value)).map((c) =>
            favorEl(hand.get(c.value), { choice: c, onPick: () => this.act(c), progress: progress.get(c.value) }))));
      }
    }
    const hints = [["cell", "Click an orange cell of the wall."], ["governor", "Click a violet cell for the Governor block (free)."],
      ["region", "Click the camp of the region to move to."],
      ["prisons", this.picked === null ? "Click two prisons for the Convicts." : `Prison of region ${this.picked + 1} picked: click the other.`]];
    for (const [kind, hint] of hints) {
      const items = byKind(kind);
      if (!items.length) continue;
      list.append(h("div", { class: "hint" }, h("span", { text: hint }), h("details", { class: "list" },
        h("summary", { text: `or choose from the list (${items.length})` }),
        h("div", { class: "choices row" }, items.map((c) => this.choiceButton(c))))));
    }
    return list;
  }

  // The bid: a slider and a number field kept in step, bounded by the legal bids; beside them what
  // the other seats could answer with (their Jade and petition bonuses, public).
  bidRow(bids) {
    const values = bids.map((c) => c.value);
    const slider = h("input", { type: "range", id: "bid", min: 0, max: bids.length - 1, value: 0, "aria-label": "your bid" });
    const number = h("input", { type: "number", id: "bid-number", min: values[0], max: values[values.length - 1], step: 1,
      value: values[0], inputmode: "numeric", "aria-label": "your bid in Jade" });
    const seal = h("button", { type: "button", id: "seal-bid", class: "choice primary" });
    const cost = h("span", { class: "muted small", id: "bid-cost" });
    const show = () => {
      const c = bids[Number(slider.value)];
      seal.textContent = `Seal a bid of ${c.value} Jade`;
      seal.setAttribute("data-action", c.action);
      cost.textContent = c.value ? `you pay ${c.value} Jade only if you win` : "free: you pay nothing";
    };
    // The nearest legal bid to what is typed (the legal bids are the server's).
    const nearest = (v) => values.reduce((best, x, i) => (Math.abs(x - v) < Math.abs(values[best] - v) ? i : best), 0);
    slider.addEventListener("input", () => {
      number.value = values[Number(slider.value)];
      show();
    });
    number.addEventListener("input", () => {
      if (number.value === "" || !Number.isFinite(Number(number.value))) return;
      slider.value = nearest(Number(number.value));
      show();
    });
    number.addEventListener("change", () => {
      number.value = values[Number(slider.value)];
    });
    seal.addEventListener("click", () => this.act(bids[Number(slider.value)]));
    show();
    const view = this.snap.view;
    const others = view.players.filter((p) => p.seat !== view.seat).map((p) =>
      h("span", { class: "rival", "data-seat": p.seat }, dot(p.seat),
        `${p.mark}: ${p.jade} Jade, petition +${p.petition_bonus}${p.bid_sealed ? " (bid sealed)" : ""}`));
    const mine = view.players[view.seat];
    return h("div", { class: "bid-box" },
      h("div", { class: "bid-row" }, h("span", { text: "Your sealed bid:" }), slider, number, seal, cost),
      h("div", { class: "rivals small", id: "rivals" }, h("span", { text: `You: ${mine.jade} Jade, petition +${mine.petition_bonus}. Others:` }), others));
  }

  // Your own seat, always in view: resources, where you stand in the round, and every card of your
  // favor hand with how far its pattern is on the wall (the list scrolls on its own when long).
  renderMine(snap) {
    const el = clear(this.mine);
    const view = snap.view;
    const me = view.players[snap.seat];
    const choosable = new Map((snap.waiting ? view.choices : []).filter((c) => c.kind === "favor").map((c) => [c.value, c]));
    const ended = snap.if_ended ? snap.if_ended.rows[snap.seat] : null;
    el.append(h("header", { style: { background: SEAT_COLOURS[me.seat], color: SEAT_TEXT[me.seat] } },
      h("span", { text: `${me.mark} (you)` }),
      h("span", { id: "my-score" }, `${me.score} VP`, ended ? h("small", { class: "if-ended", text: ` · ${ended.total} if it ended now` }) : null)));
    el.append(h("p", { class: "res-line small", id: "my-resources", text:
      `Jade ${me.jade} · Laborers ${me.laborers} · Convicts ${me.convicts} · Blocks ${me.blocks_supply} · Treasure ${me.treasure} · Chips ${me.chips} · ${snap.stage || ""}${me.governor_block_in_hand ? " · Governor block in hand" : ""}` }));
    const progress = new Map((snap.hand || []).map((p) => [p.id, p]));
    const cards = [...(me.hand || [])].sort((a, b) => needOf(progress.get(a.id)) - needOf(progress.get(b.id)));
    const hand = h("div", { class: "hand-list", id: "my-hand" });
    for (const c of cards) {
      const card = favorEl(c, { choice: choosable.get(c.id), onPick: () => this.act(choosable.get(c.id)), progress: progress.get(c.id) });
      const cells = (progress.get(c.id) || {}).cells || [];
      card.addEventListener("mouseenter", () => markCells(cells, true));
      card.addEventListener("mouseleave", () => markCells(cells, false));
      hand.append(card);
    }
    if (!cards.length) hand.append(h("span", { class: "muted small", text: "no favor card in hand" }));
    const count = cards.length ? ` (${cards.length}; a card's reward counts once you play it)` : "";
    el.append(h("div", { class: "small hand-title", title: cards.length ? (progress.get(cards[0].id) || {}).when || "" : "" },
      `Your favor hand${count}:`), hand);
  }
}

const needOf = (p) => (!p ? 99 : p.need === null ? 98 : p.need);

// The cells a card of your hand still needs, marked on the wall while the pointer is on the card.
function markCells(cells, on) {
  for (const cell of cells) {
    for (const rect of document.querySelectorAll(`svg.board rect.cell[data-cell="${cell}"]`)) rect.classList.toggle("needed", on);
  }
}

// The confirmation asked before a move that loses something or ends the game.
export function confirmMove(choice, warning) {
  const dialog = document.getElementById("confirm");
  clear(document.getElementById("confirm-text")).append(h("b", { text: choice.label }), h("br"), warning);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}
