// The person's name for the people's ratings: chosen once in this browser, kept in localStorage
// and sent with each new game (startGame); the server checks it (web/ratings.py: letters, digits,
// spaces and . _ ' -, at most 32) and says why it refuses one. Without a name a game is not rated.
import { get, query } from "./api.js";
import { h } from "./dom.js";

const KEY = "if-person-name";

export function personName() {
  try {
    return localStorage.getItem(KEY) || null;
  } catch {
    return null; // storage refused (private mode): no name, games unrated
  }
}

// A new game's body with the person's name, when one was chosen.
export function withName(body) {
  const name = personName();
  return name ? { ...body, name } : body;
}

const ratingText = (r) => (r ? `${r.name}: ${r.ordinal.toFixed(1)} (μ ${r.mu.toFixed(1)} ± ${r.sigma.toFixed(1)}) after ${r.games} game${r.games === 1 ? "" : "s"}`
  : "not rated yet: finish a game");

// The name field: saved once checked by the server; "Forget" plays unrated again.
export function nameForm() {
  const input = h("input", { id: "person-name", type: "text", maxlength: 32, autocomplete: "nickname",
    placeholder: "your name", value: personName() || "", style: { width: "11em", maxWidth: "100%" } });
  const status = h("span", { class: "muted small", id: "name-status" });
  const save = h("button", { type: "button", id: "save-name", text: "Save" });
  const forget = h("button", { type: "button", id: "forget-name", text: "Forget" });
  const show = async () => {
    const name = personName();
    forget.hidden = !name;
    if (!name) {
      status.textContent = "Games are rated once you give a name.";
      return;
    }
    try {
      const found = await get(`/api/people${query({ name })}`);
      status.textContent = ratingText(found.rating);
    } catch (error) {
      status.textContent = error.message;
    }
  };
  save.addEventListener("click", async () => {
    try {
      const found = await get(`/api/people${query({ name: input.value })}`);
      localStorage.setItem(KEY, found.name);
      input.value = found.name;
      status.textContent = `Saved: your games are rated as person:${found.name}. ${ratingText(found.rating)}`;
      forget.hidden = false;
    } catch (error) {
      status.textContent = `Not saved: ${error.message}`;
      status.classList.add("error");
      return;
    }
    status.classList.remove("error");
  });
  forget.addEventListener("click", () => {
    localStorage.removeItem(KEY);
    input.value = "";
    show();
  });
  show();
  return h("div", { class: "form-row", id: "person-row", style: { flexWrap: "wrap" } },
    h("label", { for: "person-name", text: "your name" }), input, save, forget, status);
}
