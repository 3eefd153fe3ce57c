// Island Fortress in the browser: the start page, play, watch, replay, leaderboard. Every
// position comes from the server as the viewer's seat may see it. Plain ES modules, no build:
//   shared.js      config, router, errors, seat names, game tokens
//   home.js        the start page (bot levels, watch, the records)
//   screen.js      the table screen (table, side column, bar)
//   live.js        play and watch; bar.js the action bar, recap.js the recap and the end screen
//   replay.js      replays; analysis.js the chances to win and a checkpoint's top actions
//   leaderboard.js the leaderboard; board.js, chart.js the drawings; api.js, dom.js helpers
import { get } from "./api.js";
import { h } from "./dom.js";
import { HomePage } from "./home.js";
import { LeaderboardPage } from "./leaderboard.js";
import { LivePage } from "./live.js";
import { ReplayPage } from "./replay.js";
import { navigate, shared, showError, showFailure } from "./shared.js";

let page = null; // the current page: {start(), dispose()}

const PAGES = [
  [/^\/play\/([^/]+)$/, (m) => new LivePage(m[1], "play"), "This game could not be opened"],
  [/^\/watch\/([^/]+)$/, (m) => new LivePage(m[1], "watch"), "This game could not be opened"],
  [/^\/replay\/([^/]+)$/, (m, params) => new ReplayPage(m[1], params), "This replay could not be opened"],
  [/^\/leaderboard$/, () => new LeaderboardPage(), "The leaderboard could not be read"],
];

function route() {
  if (page) page.dispose();
  page = null;
  const path = decodeURIComponent(location.pathname);
  const params = new URLSearchParams(location.search);
  let failed = "The start page could not be read";
  for (const [pattern, make, what] of PAGES) {
    const match = path.match(pattern);
    if (match) {
      page = make(match, params);
      failed = what;
      break;
    }
  }
  if (!page) page = new HomePage();
  const current = page;
  page.start().catch((error) => {
    if (current !== page) return;
    showFailure(error, failed); // in the page's place: never "Loading…" for ever
    console.error(error);
  });
}

function dialogs() {
  const body = document.getElementById("rules-body");
  for (const section of shared.config.rules) {
    body.append(h("h3", { text: section.title }), h("ul", {}, section.lines.map((line) => h("li", { text: line }))));
  }
  const rules = document.getElementById("rules");
  document.getElementById("rules-button").addEventListener("click", () => rules.showModal());
}

async function main() {
  shared.route = route;
  shared.config = await get("/api/config");
  dialogs();
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-nav]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(link.getAttribute("href"));
  });
  window.addEventListener("popstate", route);
  route();
}

main().catch((error) => {
  showError(error);
  showFailure(error, "The server could not be reached");
});
