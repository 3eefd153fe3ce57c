// The evaluation graph: each seat's estimated chance to win over the game, like a chess
// site's evaluation bar drawn over time, each in its 95% band. Click to jump to a position (replays).
import { s } from "./dom.js";
import { SEAT_COLOURS, MARKS } from "./board.js";

const W = 360;
const H = 150;
const PAD = 22;

export function chartSvg(points, { players, total, now = null, onPick = null }) {
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": "each seat's chance to win over the game" });
  const x = (step) => PAD + ((W - PAD - 6) * step) / Math.max(total, 1);
  const y = (p) => 6 + (H - PAD - 6) * (1 - p);
  svg.append(s("line", { x1: PAD, y1: y(0), x2: W - 6, y2: y(0), class: "axis" }));
  svg.append(s("line", { x1: PAD, y1: y(1), x2: PAD, y2: y(0), class: "axis" }));
  for (const p of [0, 0.5, 1]) {
    svg.append(s("text", { x: 2, y: y(p) + 4, "font-size": 10, fill: "#888", text: `${Math.round(p * 100)}%` }));
  }
  svg.append(s("line", { x1: PAD, y1: y(1 / players), x2: W - 6, y2: y(1 / players), class: "axis",
    "stroke-dasharray": "2 3" }));
  svg.append(s("text", { x: W - 6, y: H - 6, "text-anchor": "end", "font-size": 10, fill: "#888",
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
