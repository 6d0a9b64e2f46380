// A team's server (igot serve --team): the same page, with a person signed in. startTeam() asks
// who that is (api/me; one person's workspace answers 404 and nothing here runs), shows them in
// the header with Sign out, marks the page by role (a viewer's page hides what changes the
// library: workspace.css, body.read-only), and polls api/activity every 2 s for what teammates
// did: a toast, the open interview drawn again where the user is, the Activity page refreshed.
// Once the server says the session ended (401), the page stops: a banner says so, nothing polls.
import { api, onSignedOut } from "./api.js";
import { emailOf, interviewName, refreshActivity, shortText, titles, whoOf } from "./activity.js";
import { loadComments } from "./comments.js";
import { refreshInterview } from "./interview.js";
import { state } from "./state.js";
import { esc, toast } from "./ui.js";

const EVERY = 2000;   // ms between two polls while the tab is shown
let last = 0;         // the newest activity seen
let timer = null;
let polling = false;
let stopped = false;
let waiting = null;   // the open interview's stem, drawn again once the user is done with what they do

// Resolves to whether the page should draw its view (false: the session ended, the banner says so).
export async function startTeam() {
  onSignedOut(signedOut);
  let me;
  try {
    me = await api("api/me");
  } catch (err) {
    return err.status !== 401;  // 404: one person's workspace, as ever
  }
  state.me = me;
  document.body.classList.add("team", `role-${me.role}`);
  if (!me.can || !me.can.write) document.body.classList.add("read-only");
  showWho(me);
  document.querySelectorAll(".team-only").forEach((el) => { el.hidden = false; });
  startPolling();
  return true;
}

// --- the header: who is signed in, and Sign out (here, or everywhere) -------------------------
function showWho(me) {
  const box = document.getElementById("whoami");
  if (!box) return;
  box.innerHTML = `<span class="whoami-name" title="${esc(me.email)}">${esc(me.name || me.email)}</span>
    <span class="whoami-role">(${esc(me.role)})</span> ·
    <button type="button" class="link signout-open" aria-haspopup="menu" aria-expanded="false">Sign out</button>
    <div class="signout-menu" role="menu" hidden>
      <button type="button" role="menuitem" class="signout-here">Sign out here</button>
      <button type="button" role="menuitem" class="signout-everywhere" title="Every browser and device you are signed in on">Sign out everywhere</button>
    </div>`;
  box.hidden = false;
  const open = box.querySelector(".signout-open"), menu = box.querySelector(".signout-menu");
  const show = (yes) => { menu.hidden = !yes; open.setAttribute("aria-expanded", String(yes)); };
  open.addEventListener("click", (e) => { e.stopPropagation(); show(menu.hidden); });
  document.addEventListener("click", (e) => { if (!menu.hidden && !box.contains(e.target)) show(false); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !menu.hidden) { show(false); open.focus(); } });
  box.querySelector(".signout-here").addEventListener("click", () => signOut("DELETE", "api/session"));
  box.querySelector(".signout-everywhere").addEventListener("click", () => signOut("POST", "api/session/everywhere"));
}

async function signOut(method, path) {
  stop();
  try {
    await api(path, method === "POST" ? { method, body: {} } : { method });
  } catch (err) {
    if (err.status !== 401) { toast(err.message, "error"); startPolling(); return; }
  }
  location.assign("/signin");
}

// --- signed out: say so, and stop -----------------------------------------------------------------
function signedOut(message, signin) {
  stop();
  document.body.classList.add("signed-out", "read-only");  // nothing can be changed any more
  if (document.querySelector(".signed-out-banner")) return;
  const banner = document.createElement("div");
  banner.className = "signed-out-banner";
  banner.setAttribute("role", "alert");
  banner.innerHTML = `You are signed out (your session ended: signed out elsewhere, or removed from the team):
    <a href="${esc((signin || "/signin") + location.hash)}">sign in again</a>`;  // then back here
  document.body.prepend(banner);
  const who = document.getElementById("whoami");
  if (who) who.hidden = true;
  if (state.player && state.player.pause) { try { state.player.pause(); } catch { /* a player gone meanwhile */ } }
}

function stop() {
  stopped = true;
  clearTimeout(timer);
  timer = null;
}

// --- polling --------------------------------------------------------------------------------------------
let listening = false;
async function startPolling() {
  stopped = false;
  if (!listening) {
    listening = true;
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible" && !stopped) { clearTimeout(timer); poll(); }
    });
  }
  if (!last) {
    try {
      last = (await api("api/activity?limit=1")).last || 0;  // what is older than this page is not news
    } catch (err) {
      if (err.status === 401) return;
    }
  }
  schedule();
}

function schedule() {
  clearTimeout(timer);
  timer = stopped ? null : setTimeout(poll, EVERY);
}

async function poll() {
  timer = null;
  if (stopped || polling || document.visibilityState === "hidden") return;  // hidden: visibilitychange polls again
  polling = true;
  try {
    const got = await api(`api/activity?after=${last}&limit=100`);
    const items = (got.items || []).filter((i) => Number(i.id) > last);
    last = Math.max(last, Number(got.last) || 0, ...items.map((i) => Number(i.id) || 0));
    if (items.length) await news(items);
  } catch (err) {
    if (err.status === 401) return;  // signedOut() stopped everything
    // a network hiccup or a server restarting: the next poll tries again
  } finally {
    polling = false;
  }
  if (waiting) refreshOpen(waiting);
  schedule();
}

// The stem of the interview open now (its page, not a list's quote pane), or "".
function openStem() {
  const m = location.hash.match(/^#\/interview\/([^?]+)/);
  return m && document.getElementById("transcript") && state.interview ? decodeURIComponent(m[1]) : "";
}

async function news(items) {  // newest first
  if (document.querySelector(".activity")) refreshActivity();
  // The open interview is read again whoever changed it (the user, in another tab, too): drawn
  // only if it is not what this page shows already.
  const here = openStem();
  const touched = items.filter((i) => i.stem && i.stem === here);
  if (touched.some((i) => !isComment(i))) refreshOpen(here);
  if (touched.some(isComment)) loadComments(here);
  const mine = String(state.me.email || "").toLowerCase();
  const others = items.filter((i) => emailOf(i) !== mine);
  if (!others.length) return;
  const first = others[0];
  let known = {};
  if (first.stem && !first.interview && !first.title) known = await titles(first.stem);
  const iv = interviewName(first, known), text = shortText(first.text, 60);
  const more = others.length > 1 ? ` (and ${others.length - 1} more)` : "";
  const said = `${whoOf(first)} ${first.kind || "changed"}${text ? ` “${text}”` : first.thing ? ` ${first.thing}` : ""}${iv ? ` in ${iv}` : ""}${more}`;
  toast(said);
}

function isComment(item) {
  return /comment/i.test(String(item.kind || "")) || /^comment/i.test(String(item.thing || ""));
}

// Whether the user is in the middle of something a redraw would lose: a form or offer open, words
// being corrected, the speakers' names being typed, a selection of words being made.
function busy() {
  if (document.querySelector(".popover, #transcript .editor, .names-panel:not([hidden])")) return true;
  const sel = window.getSelection();
  const transcript = document.getElementById("transcript");
  return Boolean(sel && !sel.isCollapsed && sel.rangeCount && transcript && transcript.contains(sel.getRangeAt(0).commonAncestorContainer));
}

// Whether the page shows `data` already. A change of this page made over a teammate's newer one
// (its answer's merged) has the newest version, yet phrases drawn from the older one: compared whole.
function same(data, shown) {
  const look = (d) => JSON.stringify([d.phrases, d.speakers, d.highlights]);
  return look(data) === look(shown);
}

// The open interview read again and drawn where the user is; later if they are busy.
async function refreshOpen(stem) {
  if (stem !== openStem()) { waiting = null; return; }
  if (busy()) { waiting = stem; return; }
  waiting = null;
  const shown = state.shown, version = state.interview.version;
  let data;
  try {
    data = await api(`api/interviews/${encodeURIComponent(stem)}`);
  } catch (err) {
    return;
  }
  if (shown !== state.shown || stem !== openStem()) return;
  // Changed here meanwhile (this page's own change answered): which is newer is not known, so ask again.
  if (state.interview.version !== version) { waiting = stem; return; }
  if (data.version === version && same(data, state.interview)) return;  // what the page shows already
  if (busy()) { waiting = stem; return; }
  refreshInterview(data);
}
