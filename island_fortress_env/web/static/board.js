// The table: the wall as SVG (cells with their coordinates, camps, prisons) and the players'
// panels. Only what the server sent is drawn; what can be chosen is marked and clickable.
import { h, s } from "./dom.js";

export const MARKS = "ABCD";
export const SEAT_COLOURS = ["rgb(165,35,40)", "rgb(45,110,205)", "rgb(70,165,85)", "rgb(240,205,60)"];
export const SEAT_TEXT = ["#fff", "#fff", "#000", "#000"];
const GOVERNOR = -1;
const GOVERNOR_COLOUR = "rgb(225,225,215)";
const ROLE_LETTERS = "RPBTM";
export const ROLE_NAMES = ["Recruiter", "Planner", "Builder", "Treasurer", "Taskmaster"];

const CELL = 52;
const GAP = 30;
const LEFT = 40;
const TOP = 30;
const BAND = TOP + 4 * CELL + 118; // one row of regions: the wall, its camps and prisons

// Where a region is drawn: regions side by side, or `perRow` to a row (a phone: one a row, so
// that the cells stay large enough to read and to tap).
function regionAt(region, perRow) {
  return [LEFT + (region % perRow) * (5 * CELL + GAP), Math.floor(region / perRow) * BAND];
}

function cellXY(cell, perRow) {
  const [x0, y0] = regionAt(cell.region, perRow);
  return [x0 + cell.column * CELL, y0 + TOP + (3 - cell.level) * CELL];
}

function groupBy(choices, kinds, key) {
  const out = new Map();
  for (const c of choices) {
    if (!kinds.includes(c.kind)) continue;
    const k = key(c);
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(c);
  }
  return out;
}

// opts: {choices, onPick(choices, where), onPrison(region), picked: region|null, flash: [cells],
// recent: {cell: seat} (blocks the other seats changed since your last turn), perRow: regions a row}
// A cell to build on (or replace, reinforce, clear) is marked orange, a cell for the Governor
// block violet, a cell that is both with both colours.
export function boardSvg(view, opts = {}) {
  const choices = opts.choices || [];
  const recent = opts.recent || {};
  const byCell = groupBy(choices, ["cell", "governor"], (c) => c.value);
  const byRegion = groupBy(choices, ["region"], (c) => c.value);
  const prisonTargets = new Set();
  for (const c of choices) if (c.kind === "prisons") prisonTargets.add(c.value).add(c.other);
  const flash = new Set(opts.flash || []);
  const perRow = Math.max(1, Math.min(opts.perRow || view.regions, view.regions));
  const rows = Math.ceil(view.regions / perRow);
  const width = LEFT + perRow * (5 * CELL + GAP) - GAP + 12;
  const height = rows * BAND;
  const svg = s("svg", { class: `board${perRow < view.regions ? " stacked" : ""}`, viewBox: `0 0 ${width} ${height}`,
    role: "img", "aria-label": "the wall, its camps and prisons", id: "board" });

  for (let row = 0; row < rows; row++) {
    for (let level = 0; level < 4; level++) {
      svg.append(s("text", { x: 6, y: row * BAND + TOP + (3 - level) * CELL + CELL / 2 + 4, class: "coord", text: `L${level + 1}` }));
    }
  }
  for (let r = 0; r < view.regions; r++) {
    const [x0, y0] = regionAt(r, perRow);
    const ground = y0 + TOP + 4 * CELL;
    svg.append(s("text", { x: x0 + (5 * CELL) / 2, y: y0 + 16, "text-anchor": "middle", "font-weight": 700,
      text: `Region ${r + 1}` }));
    svg.append(s("line", { x1: x0 - 6, y1: ground + 1, x2: x0 + 5 * CELL + 6, y2: ground + 1, stroke: "#1e1e1e",
      "stroke-width": 3 }));
    for (let c = 0; c < 5; c++) {
      svg.append(s("text", { x: x0 + c * CELL + CELL / 2, y: ground + 15, "text-anchor": "middle", class: "coord",
        text: `C${c + 1}` }));
    }
  }
  for (const cell of view.cells) {
    const [x, y] = cellXY(cell, perRow);
    const targets = byCell.get(cell.cell);
    const g = s("g", { "data-cell": cell.cell });
    let cls = "cell";
    let fillColour = null;
    if (cell.owner === null) cls += cell.buildable ? " buildable" : " empty";
    else fillColour = cell.owner === GOVERNOR ? GOVERNOR_COLOUR : SEAT_COLOURS[cell.owner];
    if (targets) {
      const kinds = new Set(targets.map((t) => t.kind));
      cls += kinds.has("cell") ? " target" : " gov-target";
      if (kinds.has("cell") && kinds.has("governor")) cls += " both";
    }
    if (flash.has(cell.cell)) cls += " flash";
    const rect = s("rect", { x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, rx: 3, class: cls,
      fill: fillColour, "data-cell": cell.cell, "data-label": cell.label });
    let title = cell.label;
    if (cell.owner === GOVERNOR) title += ": a Governor block";
    else if (cell.owner !== null) title += `: ${MARKS[cell.owner]}'s block${cell.reinforced ? ", reinforced" : ""}`;
    else title += cell.buildable ? ": empty, buildable" : ": empty";
    if (targets) title += " — " + targets.map((t) => `${t.label}${t.cost ? ` (${t.cost})` : ""}`).join("; ");
    if (recent[cell.cell] !== undefined) title += ` — changed by ${MARKS[recent[cell.cell]]} since your last turn`;
    rect.append(s("title", { text: title }));
    g.append(rect);
    if (targets && targets.some((t) => t.kind === "governor") && targets.some((t) => t.kind === "cell")) {
      g.append(s("rect", { x: x + 7, y: y + 7, width: CELL - 14, height: CELL - 14, rx: 2, class: "gov-ring",
        "pointer-events": "none" }));
    }
    if (recent[cell.cell] !== undefined) {
      const seat = recent[cell.cell];
      g.append(s("rect", { x: x - 1, y: y - 1, width: CELL + 2, height: CELL + 2, rx: 5, class: "recent",
        stroke: SEAT_COLOURS[seat], "data-recent": seat, "pointer-events": "none" }));
    }
    if (cell.owner !== null) {
      if (cell.reinforced) {
        g.append(s("rect", { x: x + 6, y: y + 6, width: CELL - 12, height: CELL - 12, fill: "none", stroke: "#1e1e1e",
          "stroke-width": 3, "pointer-events": "none" }));
        g.append(s("rect", { x: x + 10, y: y + 10, width: CELL - 20, height: CELL - 20, fill: "none", stroke: "#fff",
          "stroke-width": 2, "pointer-events": "none" }));
      }
      const mark = cell.owner === GOVERNOR ? "G" : MARKS[cell.owner];
      const ink = cell.owner === GOVERNOR ? "#1e1e1e" : SEAT_TEXT[cell.owner];
      g.append(s("text", { x: x + CELL / 2, y: y + CELL / 2 + 7, "text-anchor": "middle", class: "mark", fill: ink,
        text: mark }));
    } else {
      g.append(s("text", { x: x + CELL / 2, y: y + CELL - 8, "text-anchor": "middle", class: "coord",
        "pointer-events": "none", text: `L${cell.level + 1}C${cell.column + 1}` }));
    }
    if (targets && opts.onPick) {
      rect.addEventListener("click", () => opts.onPick(targets, cell.label));
    }
    svg.append(g);
  }
  for (let r = 0; r < view.regions; r++) {
    const [x0, y0] = regionAt(r, perRow);
    const campY = y0 + TOP + 4 * CELL + 24;
    const regionTargets = byRegion.get(r);
    const camp = s("rect", { x: x0, y: campY, width: 5 * CELL, height: 34, rx: 5, fill: "#f3ecdc",
      stroke: "#b9ae97", class: `camp${regionTargets ? " target" : ""}`, "data-region": r });
    camp.append(s("title", { text: regionTargets ? regionTargets[0].label : `camp of region ${r + 1}` }));
    if (regionTargets && opts.onPick) camp.addEventListener("click", () => opts.onPick(regionTargets, `region ${r + 1}`));
    svg.append(camp);
    svg.append(s("text", { x: x0 + 6, y: campY + 21, class: "small", fill: "#5e574b", text: "camp" }));
    let tx = x0 + 52;
    for (const p of view.players) {
      if (p.taskmaster_region !== r) continue;
      svg.append(s("circle", { cx: tx, cy: campY + 17, r: 11, fill: SEAT_COLOURS[p.seat], stroke: "#1e1e1e",
        "stroke-width": 1.5, "pointer-events": "none" }));
      svg.append(s("text", { x: tx, y: campY + 21, "text-anchor": "middle", class: "small", "font-weight": 700,
        fill: SEAT_TEXT[p.seat], text: MARKS[p.seat] }));
      tx += 27;
    }
    const prisonY = campY + 42;
    const prison = view.prisons[r];
    const isTarget = prisonTargets.has(r);
    const picked = opts.picked === r;
    const box = s("rect", { x: x0, y: prisonY, width: 5 * CELL, height: 34, rx: 5, fill: "#ece7df",
      stroke: "#8f877b", class: `prison${isTarget ? " target" : ""}${picked ? " picked" : ""}`, "data-prison": r });
    box.append(s("title", { text: `prison of region ${r + 1}` }));
    if (isTarget && opts.onPrison) box.addEventListener("click", () => opts.onPrison(r));
    svg.append(box);
    svg.append(s("text", { x: x0 + 8, y: prisonY + 22, class: "small",
      text: `prison: ${prison.jade} Jade · ${prison.convicts} Convicts` }));
  }
  return svg;
}

export function patternEl(pattern) {
  const grid = h("span", { class: "pattern", "aria-hidden": "true" });
  for (const row of pattern) {
    for (let i = 0; i < 3; i++) grid.append(h("i", { class: row[i] === "X" ? "x" : "" }));
  }
  return grid;
}

// A favor card; `progress` (your own hand only, from the server): how many blocks its pattern still
// needs on the wall, and when its reward counts.
export function favorEl(card, { choice = null, onPick = null, played = false, progress = null } = {}) {
  const complete = progress && progress.need === 0;
  const attrs = { class: `favor${played ? " played" : ""}${choice ? " target" : ""}${complete ? " complete" : ""}`,
    "data-card": card.id, title: [`${card.name}: ${card.rewards}`, choice ? choice.label : null,
      progress ? progress.progress : null, progress ? progress.when : null].filter(Boolean).join(" — ") };
  if (progress) attrs["data-need"] = progress.need === null ? "none" : progress.need;
  const el = choice ? h("button", { ...attrs, type: "button", "data-action": choice.action }) : h("div", attrs);
  const text = h("span", { class: "favor-text" }, h("b", { text: card.name }));
  if (progress) {
    const need = progress.need === null ? "no room left on the wall" : complete ? "complete: can be played"
      : `needs ${progress.need} more of ${progress.size}`;
    text.append(" · ", h("span", { class: "need", text: need }));
  }
  text.append(h("br"), card.rewards);
  el.append(patternEl(card.pattern), text);
  if (choice && onPick) el.addEventListener("click", () => onPick([choice], card.name));
  return el;
}

function tagsOf(p) {
  const tags = [];
  if (p.winner) tags.push("WINNER");
  if (p.to_move) tags.push("to move");
  if (p.governor_marker) tags.push("Governor marker");
  if (p.governor_block_in_hand) tags.push("Governor block in hand");
  if (p.bid !== null && p.bid !== undefined) tags.push(`sealed bid ${p.bid}`);
  else if (p.bid_sealed) tags.push("bid sealed");
  else if (p.last_bid !== null && p.last_bid !== undefined) tags.push(`last bid ${p.last_bid}`);
  return tags.join(" · ");
}

// opts: {choices, onPick, ops, ifEnded: the server's scores if the game ended now, or null}
export function playersEl(view, opts = {}) {
  const ended = new Map(((opts.ifEnded && opts.ifEnded.rows) || []).map((r) => [r.seat, r]));
  const favorChoices = new Map();
  for (const c of opts.choices || []) if (c.kind === "favor") favorChoices.set(c.value, c);
  // A role card's actions, Taskmaster B's repeats under the Taskmaster (opts.ops: the action table).
  const roleChoices = new Map();
  for (const c of opts.choices || []) {
    if (c.kind !== "role" && c.kind !== "repeat") continue;
    const card = c.kind === "repeat" ? 4 : opts.ops[c.value].card;
    if (!roleChoices.has(card)) roleChoices.set(card, []);
    roleChoices.get(card).push(c);
  }
  const wrap = h("div", { class: "players" });
  for (const p of view.players) {
    // The name is cut short (with an ellipsis) before it can run into the score.
    const head = h("header", { style: { background: SEAT_COLOURS[p.seat], color: SEAT_TEXT[p.seat] } },
      h("span", { class: "name", title: `${p.mark} ${p.name}`, text: `${p.mark} ${p.name}` }),
      h("span", { class: "score", "data-score": p.seat, title: ended.has(p.seat) ? "now; and if the game ended now" : "" },
        `${p.score} VP`, ended.has(p.seat) ? h("small", { class: "if-ended", text: ` · ${ended.get(p.seat).total} at the end` }) : null));
    const res = h("div", { class: "res" },
      h("span", { text: `Jade ${p.jade}` }), h("span", { text: `Treasure ${p.treasure}` }),
      h("span", { text: `Laborers ${p.laborers}` }), h("span", { text: `Convicts ${p.convicts}` }),
      h("span", { text: `Blocks ${p.blocks_supply}` }), h("span", { text: `stockpile ${p.blocks_stockpile}` }),
      h("span", { text: `on the wall ${p.blocks_on_wall}` }), h("span", { text: `Buyback Chips ${p.chips}` }),
      h("span", { text: `income +${p.income_bonus}` }), h("span", { text: `petition +${p.petition_bonus}` }),
      h("span", { text: `turns taken ${p.turns_taken}/3` }));
    const roles = h("div", { class: "roles", "aria-label": "role cards" });
    const mine = p.to_move && p.seat === view.seat;
    for (let r = 0; r < 5; r++) {
      const state = p.roles_hand.includes(r) ? "hand" : p.roles_table.includes(r) ? "table" : "none";
      const where = state === "hand" ? "in hand" : state === "table" ? "played this round" : "not held";
      const options = mine ? roleChoices.get(r) : undefined;
      const chip = h(options ? "button" : "span", {
        class: `role ${state}${options ? " target" : ""}`, "data-role": r, type: options ? "button" : undefined,
        title: `${ROLE_NAMES[r]}: ${where}${options ? " — click to play it" : ""}`, text: ROLE_LETTERS[r],
      });
      if (options && opts.onPick) chip.addEventListener("click", () => opts.onPick(options, `the ${ROLE_NAMES[r]}`));
      roles.append(chip);
    }
    const favors = h("div", {});
    if (p.hand === null) {
      if (p.hand_count) favors.append(h("div", { class: "muted", text: `${p.hand_count} favor cards in hand (hidden)` }));
    } else if (p.hand.length) {
      favors.append(h("div", { text: "favor cards in hand:" }),
        h("div", { class: "favors" }, p.hand.map((c) => favorEl(c, { choice: favorChoices.get(c.id), onPick: opts.onPick }))));
    }
    if (p.choosing === null) {
      if (p.choosing_count) favors.append(h("div", { class: "muted", text: `choosing from ${p.choosing_count} favor cards (hidden)` }));
    } else if (p.choosing.length) {
      favors.append(h("div", { text: "choosing from:" }),
        h("div", { class: "favors" }, p.choosing.map((c) => favorEl(c, { choice: favorChoices.get(c.id), onPick: opts.onPick }))));
    }
    if (p.favor_played.length) {
      favors.append(h("div", { text: "played:" }),
        h("div", { class: "favors" }, p.favor_played.map((c) => favorEl(c, { played: true }))));
    }
    wrap.append(h("section", { class: `player${p.to_move ? " to-move" : ""}`, "data-seat": p.seat }, head,
      h("div", { class: "body" }, h("div", { class: "tags", text: tagsOf(p) }), res, roles, favors)));
  }
  return wrap;
}
