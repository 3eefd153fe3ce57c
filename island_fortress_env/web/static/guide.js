// The first-game guide: a short tour of the table, one element at a time (the deal, the wall, the
// bar, your hand, the score if the game ended now, the recap and the log), shown by itself on the
// first game this browser plays (localStorage) and opened again by the header's Guide button. The
// sentences with the game's numbers (cards dealt and kept, turns a round, when a favor's reward
// counts) are the server's (`guide` in the game's first answer); the rest says what is on screen.
// It never covers the bar: it sits at the top of the table, and a click elsewhere still works.
import { clear, h, toast } from "./dom.js";

const SEEN = "if-guide-seen";
let current = null; // the guide of the table on screen, for the header's button

export class Guide {
  constructor(words) {
    this.steps = [
      ["#bar-favors, #decision", "The deal", words.deal],
      ["#board", "The wall", "Orange cells are where you can build now, violet ones take the Governor block; "
        + "click one. Each cell is named by its level and column (L2C3). Blocks the others placed since your "
        + "last turn are ringed in their colour."],
      ["#decision", "The bar", "What is asked and your choices, each with its cost; the ones you cannot take "
        + "are folded under \"Not possible now\" with why. A choice that loses something asks first. "
        + `${words.round || ""}`],
      ["#undo, #decision", "Undo", "Undo takes back your moves until you end your turn: when your turn is over "
        + "the bar asks you to confirm, and only then do the bots play. A move that showed you something "
        + "hidden (cards drawn, the bids revealed) stands."],
      ["#my-hand", "Your favor hand", `Every card of your hand, with how many blocks its pattern still needs on `
        + `the wall (point at a card to see the cells). ${words.favors || ""}`],
      ["#if-ended", "The score if it ended now", "Beside each score, what it would be if the game ended now: "
        + "the unfinished rows and levels and the end bonuses (least-built region, Treasure, Jade, Workers, "
        + "Buyback Chips), scored by the game's own end scoring."],
      ["#recap, #log-panel", "What the others did", "\"Since your last turn\" tells each bot's turn and every "
        + "score change with its reason; \"What happened\" is the whole game. The Rules button has the rules."],
    ].filter(([, , text]) => text);
    this.index = 0;
    this.el = h("section", { id: "guide", class: "guide", role: "dialog", "aria-label": "first-game guide", hidden: true });
    document.body.append(this.el);
    current = this;
  }
  dispose() {
    this.focus(null);
    this.el.remove();
    if (current === this) current = null;
  }
  firstTime() {
    let seen = false;
    try {
      seen = localStorage.getItem(SEEN) === "1";
    } catch {
      seen = false;
    }
    if (!seen) this.open(0);
  }
  open(index = 0) {
    this.index = Math.max(0, Math.min(index, this.steps.length - 1));
    this.render();
  }
  close() {
    this.el.hidden = true;
    this.focus(null);
    try {
      localStorage.setItem(SEEN, "1");
    } catch {
      // a browser that keeps nothing shows the guide again next time
    }
  }
  focus(selector) {
    for (const el of document.querySelectorAll(".guide-focus")) el.classList.remove("guide-focus");
    if (!selector) return;
    const target = document.querySelector(selector);
    if (target) {
      target.classList.add("guide-focus");
      target.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }
  render() {
    const [selector, title, text] = this.steps[this.index];
    const last = this.index === this.steps.length - 1;
    const back = h("button", { type: "button", id: "guide-back", text: "Back", disabled: this.index === 0 });
    back.addEventListener("click", () => this.open(this.index - 1));
    const next = h("button", { type: "button", id: "guide-next", class: "primary", text: last ? "Start playing" : "Next" });
    next.addEventListener("click", () => (last ? this.close() : this.open(this.index + 1)));
    const skip = h("button", { type: "button", id: "guide-close", class: "close", "aria-label": "close the guide", text: "×" });
    skip.addEventListener("click", () => this.close());
    clear(this.el).append(skip, h("h3", { text: `${title} (${this.index + 1}/${this.steps.length})` }),
      h("p", { id: "guide-text", text }), h("div", { class: "controls" }, back, next,
        h("span", { class: "muted small", text: "The Guide button above opens this again." })));
    this.el.hidden = false;
    this.focus(selector);
  }
}

// The header's Guide button: the tour of the table on screen, or where to find it.
export function openGuide() {
  if (current) current.open(0);
  return Boolean(current);
}

const button = document.getElementById("guide-button");
if (button) {
  button.addEventListener("click", () => {
    if (!openGuide()) toast("The guide tours a game's table: start a game and it opens there.");
  });
}
