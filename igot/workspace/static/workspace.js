// The iGot workspace page's entry module: it routes and starts the app. One page, routed by the
// address's #fragment, so every request stays relative to where the page is served from
// (127.0.0.1, or Colab's port proxy under its own path). Each view is its own module, loaded as
// an ES module from static/ with no build step: a new view is one new module and one line below.
import { showActivity } from "./activity.js";
import { showAsk } from "./ask.js";
import { showGlossary } from "./glossary.js";
import { showInterview, listenToKeys } from "./interview.js";
import { showLibrary } from "./library.js";
import { phraseAt, stopPlayer } from "./playback.js";
import { showReport, showReports } from "./report.js";
import { listenToReviewKeys } from "./review.js";
import { listenToSearchBox, showSearch } from "./search.js";
import { showShared } from "./shared.js";
import { setRouter, state } from "./state.js";
import { showTag } from "./tag.js";
import { startTeam } from "./team.js";
import { showThemes } from "./themes.js";
import { closePopover, esc, view } from "./ui.js";

// #/ROUTE/PARTS...?PARAMS: the view that draws it. Anything else is the library.
const VIEWS = new Map([
  ["interview", (parts, params) => showInterview(parts[1], params)],
  ["tag", (parts) => showTag(parts.slice(1).join("/"))],
  ["tags", () => showLibrary(true)],
  ["search", (parts, params) => showSearch(params)],
  ["ask", (parts, params) => showAsk(params)],
  ["themes", (parts, params) => showThemes(params)],
  ["glossary", () => showGlossary()],
  ["reports", () => showReports()],
  ["report", (parts) => showReport(parts[1])],
  ["activity", () => showActivity()],  // a team's server only (team.js)
  ["shared", () => showShared()],  // links for people outside the team (a team's server only)
]);

let lastView = null;  // the view shown before this one

function route() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  // What the last page left: its popovers, its player, its pane and transcript.
  closePopover();
  stopPlayer();
  state.pane = null;
  state.phraseEls = null;
  state.order = null;
  state.shown += 1;  // answers that come after the user moved on are dropped
  // The box keeps a search's words while it is shown; leaving the search empties it. Only then: what
  // someone typed while the page was still loading is theirs, not the last search's.
  if (parts[0] !== "search" && lastView === "search") document.getElementById("q").value = "";
  lastView = parts[0];
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active",
    (a.dataset.nav === "tags" && (parts[0] === "tags" || parts[0] === "tag")) || (a.dataset.nav === "library" && !parts.length)
    || (a.dataset.nav === "reports" && parts[0] === "report")
    || a.dataset.nav === parts[0]));
  const show = VIEWS.has(parts[0]) ? VIEWS.get(parts[0])(parts, params) : showLibrary(false);
  return show.catch((err) => {
    view.innerHTML = `<div class="page"><p class="error">${esc(err.message)}</p><p><a href="#/">Back to the interviews</a></p></div>`;
  });
}

// For the browser tests and anyone curious: the player and what is marked.
window.igot = {
  player: () => state.player,
  now: () => state.now,
  interview: () => state.interview,
  phraseAt: (t) => phraseAt(t),
  ready: () => Boolean(state.player),
  board: () => state.board,
};

setRouter(route);
listenToKeys();
listenToReviewKeys();
listenToSearchBox();
window.addEventListener("hashchange", route);
// A team's server: who is signed in, first (one person's workspace answers 404 at once); the page
// is drawn after, by role, unless the session already ended.
startTeam().catch(() => true).then((draw) => { if (draw) route(); });
