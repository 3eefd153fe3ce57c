// What every page shares: the server's config, the router, errors, seat names, game tokens.
import { ApiError } from "./api.js";
import { MARKS, SEAT_COLOURS } from "./board.js";
import { clear, h, toast } from "./dom.js";

export const shared = { config: null, route: () => {} };
export const app = () => document.getElementById("app");
export const bar = () => document.getElementById("bar");

export function navigate(path) {
  history.pushState({}, "", path);
  shared.route();
}

export function showError(error) {
  const message = error instanceof ApiError ? error.message : String(error);
  toast(message, 6000);
  console.error(error);
}

// A page that could not start says why in its place, never "Loading…" for ever.
export function showFailure(error, what) {
  const message = error instanceof ApiError ? error.message : String(error);
  fitPage(false);
  clear(app()).append(h("section", { class: "card failure", id: "failure" },
    h("h2", { text: what }), h("p", { class: "error", text: message }),
    h("a", { href: "/", "data-nav": true, text: "Back to the start page" })));
}

export function seatName(names, seat) {
  return `${MARKS[seat]} (${names[seat]})`;
}

export function dot(seat) {
  return h("span", { class: "seat-dot", style: { background: SEAT_COLOURS[seat] } });
}

// A table page fills the window: the table scrolls inside it, the action bar stays at the bottom.
export function fitPage(on) {
  document.body.classList.toggle("fit", on);
  const el = bar();
  if (!on) {
    clear(el);
    el.hidden = true;
  }
}

// A game's token, kept in localStorage so that its link opened in another tab of this browser
// works; the newest 64 are kept.
const TOKENS = "if-tokens";
function readTokens() {
  try {
    const data = JSON.parse(localStorage.getItem(TOKENS) || "{}");
    return data && typeof data === "object" ? data : {};
  } catch {
    return {};
  }
}
export const tokens = {
  get(id) {
    const found = readTokens()[id];
    return found ? found.token : sessionStorage.getItem(`if-token-${id}`);
  },
  set(id, token) {
    const all = readTokens();
    all[id] = { token, at: Date.now() };
    const kept = Object.entries(all).sort((a, b) => b[1].at - a[1].at).slice(0, 64);
    localStorage.setItem(TOKENS, JSON.stringify(Object.fromEntries(kept)));
  },
};

// A bot level for a select: "Casual — heuristic · rating 6.3".
export function levelText(entry) {
  const rating = entry.rating ? ` · rating ${entry.rating.ordinal.toFixed(1)}` : "";
  return entry.level ? `${entry.level} — ${entry.label}${rating}` : `${entry.label}${rating}`;
}

export function levelSelect(name, value) {
  const levels = shared.config.levels;
  return h("select", { name, class: "level" }, levels.map((l) =>
    h("option", { value: l.spec, selected: l.spec === value, text: levelText(l), title: l.about })));
}
