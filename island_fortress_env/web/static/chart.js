// The evaluation graph: each seat's estimated chance to win over the game, like a chess
// site's evaluation bar drawn over time, each in its 95% band, a tick at each round's first
// decision and a mark at each mistake the server found. Click to jump to a position (replays).
import { s } from "./dom.js";
import { SEAT_COLOURS, MARKS } from "./board.js";

const W = 360;
const H = 162;
const PAD = 22;
const BOTTOM = 34; // room under the plot for the round labels and the axis text

export function chartSvg(points, { players, total, now = null, onPick = null, rounds = [], marks = [] }) {
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": "each seat's chance to win over the game" });
  const x = (step) => PAD + ((W - PAD - 6) * step) / Math.max(total, 1);
  const y = (p) => 6 + (H - BOTTOM - 6) * (1 - p);
  svg.append(s("line", { x1: PAD, y1: y(0), x2: W - 6, y2: y(0), class: "axis" }));
  svg.append(s("line", { x1: PAD, y1: y(1), x2: PAD, y2: y(0), class: "axis" }));
  for (const p of [0, 0.5, 1]) {
    svg.append(s("text", { x: 2, y: y(p) + 4, "font-size": 10, fill: "#888", text: `${Math.round(p * 100)}%` }));
  }
  svg.append(s("line", { x1: PAD, y1: y(1 / players), x2: W - 6, y2: y(1 / players), class: "axis",
    "stroke-dasharray": "2 3" }));
  // A tick at the first decision of each round, labelled where the labels do not crowd.
  const every = Math.max(1, Math.ceil(rounds.length / 12));
  rounds.forEach(({ round, step }, i) => {
    if (!round) return; // the deal starts at 0: the axis itself
    const tx = x(step);
    const tick = s("line", { x1: tx, y1: y(0), x2: tx, y2: y(0) + 5, stroke: "#888", "stroke-width": 1,
      class: "round-tick", "data-round": round, "data-step": step });
    tick.append(s("title", { text: `round ${round} starts at decision ${step}` }));
    svg.append(tick, s("line", { x1: tx, y1: y(1), x2: tx, y2: y(0), stroke: "#ddd", "stroke-width": 0.5 }));
    if (i % every === 0) {
      svg.append(s("text", { x: tx, y: y(0) + 14, "text-anchor": "middle", "font-size": 9, fill: "#777",
        class: "round-label", text: `R${round}` }));
    }
  });
  svg.append(s("text", { x: W - 6, y: H - 4, "text-anchor": "end", "font-size": 10, fill: "#888",
    text: `decision ${total}` }));
  const sorted = [...points].sort((a, b) => a.step - b.step);
  // Each seat's 95% band first, under every line.
  for (let seat = 0; seat < players && sorted.length; seat++) {
    if (!sorted[0].low) break;
    const up = sorted.map((p) => `${x(p.step).toFixed(1)},${y(p.high[seat]).toFixed(1)}`);
    const down = sorted.map((p) => `${x(p.step).toFixed(1)},${y(p.low[seat]).toFixed(1)}`).reverse();
    svg.append(s("polygon", { points: [...up, ...down].join(" "), fill: SEAT_COLOURS[seat], class: "band",
      "data-band": seat }));
  }
  for (let seat = 0; seat < players; seat++) {
    const pts = sorted.map((p) => `${x(p.step).toFixed(1)},${y(p.chances[seat]).toFixed(1)}`).join(" ");
    if (sorted.length) {
      const line = s("polyline", { points: pts, stroke: SEAT_COLOURS[seat] });
      line.append(s("title", { text: `${MARKS[seat]}` }));
      svg.append(line);
    }
  }
  // A mistake: a ring where the mover's chance fell, "?" or "??" beside it.
  const at = new Map(sorted.map((p) => [p.step, p]));
  for (const mark of marks) {
    const point = at.get(mark.to);
    if (!point) continue;
    const cx = x(mark.to);
    const cy = y(point.chances[mark.seat]);
    const ring = s("circle", { cx, cy, r: 4, fill: "#fff", stroke: mark.kind === "blunder" ? "#b4232a" : "#d9822b",
      "stroke-width": 2, class: "mistake-dot", "data-mark-step": mark.step });
    ring.append(s("title", { text: mark.text }));
    svg.append(ring, s("text", { x: cx + 5, y: cy - 4, "font-size": 9, fill: "#b4232a",
      text: mark.kind === "blunder" ? "??" : "?" }));
  }
  if (now !== null) svg.append(s("line", { x1: x(now), y1: y(1), x2: x(now), y2: y(0), class: "now" }));
  if (onPick) {
    svg.addEventListener("click", (event) => {
      const box = svg.getBoundingClientRect();
      const fx = ((event.clientX - box.left) / box.width) * W;
      const step = Math.round(((fx - PAD) / (W - PAD - 6)) * total);
      onPick(Math.max(0, Math.min(total, step)));
    });
  }
  return svg;
}

// The first decision of each round: [{round, step}], from the positions' rounds.
export function roundStarts(positions) {
  const out = [];
  positions.forEach((p, i) => {
    if (i === 0 || p.round !== positions[i - 1].round) out.push({ round: p.round, step: i });
  });
  return out;
}
