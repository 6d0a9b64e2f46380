// A team's activity (#/activity): who did what, newest first, each a link to its moment. Only on a
// team's server (igot serve --team); team.js polls for what is new and draws this page again.
import { api } from "./api.js";
import { state } from "./state.js";
import { esc, view } from "./ui.js";

const SHOWN = 100;  // items on the page

// The person of an item, whatever the server names the fields.
export function whoOf(item) {
  const p = item.person && typeof item.person === "object" ? item.person : {};
  return item.name || item.person_name || p.name || item.email || item.person_email || p.email || "Someone";
}
export function emailOf(item) {
  const p = item.person && typeof item.person === "object" ? item.person : {};
  return String(item.email || item.person_email || p.email || "").toLowerCase();
}

// "just now", "5 min ago", "3 h ago", "2 days ago", then the date.
export function ago(iso) {
  const at = Date.parse(iso && !/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? `${iso}Z` : iso);  // the server's times are UTC
  if (!isFinite(at)) return "";
  const s = Math.max(0, (Date.now() - at) / 1000);
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  if (s < 7 * 86400) { const d = Math.round(s / 86400); return `${d} day${d === 1 ? "" : "s"} ago`; }
  return new Date(at).toLocaleDateString();
}

export function whenHtml(iso) {
  const at = Date.parse(iso && !/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? `${iso}Z` : iso);
  return `<time datetime="${esc(iso || "")}" title="${isFinite(at) ? esc(new Date(at).toLocaleString()) : ""}">${esc(ago(iso))}</time>`;
}

// The interviews' names by stem (api/library), read once and again when a stem is not known.
let names = null;
export async function titles(stem) {
  if (!names || (stem && !(stem in names))) {
    names = api("api/library").then((lib) => Object.fromEntries(lib.interviews.map((iv) => [iv.stem, iv.name])))
      .catch(() => ({}));
  }
  return names;
}

export function interviewName(item, known) {
  return item.interview || item.title || (known && known[item.stem]) || item.stem || "";
}

export function shortText(text, n = 80) {
  const t = String(text || "").replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

// Where an item's link goes: its moment in the interview when known.
export function linkOf(item) {
  if (!item.stem) return "";
  const t = Number(item.time);
  return `#/interview/${encodeURIComponent(item.stem)}${item.time !== null && item.time !== undefined && isFinite(t) ? `?t=${t}` : ""}`;
}

export async function showActivity() {
  const shown = state.shown;
  if (!state.me) {
    view.innerHTML = `<div class="page"><h1>Activity</h1><p class="empty">Activity is a team's: it is shown on a team's server (igot serve --team).</p></div>`;
    return;
  }
  const [got, known] = await Promise.all([api(`api/activity?limit=${SHOWN}`), titles()]);
  if (shown !== state.shown) return;
  draw(got.items || [], known);
}

// The page drawn again with what is new (team.js, after a poll found news); nothing if it is not shown.
export async function refreshActivity() {
  const shown = state.shown;
  if (!state.me || !view.querySelector(".activity")) return;
  let got, known;
  try { [got, known] = await Promise.all([api(`api/activity?limit=${SHOWN}`), titles()]); } catch { return; }
  if (shown !== state.shown || !view.querySelector(".activity")) return;
  const missing = (got.items || []).find((i) => i.stem && !(i.stem in known));
  if (missing) known = await titles(missing.stem);
  if (shown !== state.shown) return;
  draw(got.items || [], known);
}

function draw(items, known) {
  const mine = state.me ? String(state.me.email).toLowerCase() : "";
  view.innerHTML = `<div class="page"><section class="activity"><h1>Activity</h1>
    <p class="meta">What the team did, newest first.</p>
    ${items.length ? `<ol class="activity-list">${items.slice(0, SHOWN).map((item) => {
      const text = shortText(item.text);
      const iv = interviewName(item, known), href = linkOf(item);
      const what = `<b class="activity-who">${esc(whoOf(item))}</b> <span class="activity-kind">${esc(item.kind || "changed")}</span>${
        text ? ` <q class="activity-text">${esc(text)}</q>` : item.thing ? ` <span class="activity-thing">${esc(item.thing)}</span>` : ""}${
        iv ? ` in <span class="activity-interview">${esc(iv)}</span>` : ""}`;
      return `<li class="activity-item${emailOf(item) === mine ? " mine" : ""}" data-id="${esc(item.id)}">${
        href ? `<a class="activity-link" href="${esc(href)}">${what}</a>` : `<span class="activity-link">${what}</span>`}
        <span class="activity-when">· ${whenHtml(item.at)}</span></li>`;
    }).join("")}</ol>` : `<p class="empty">Nothing yet: highlights, corrections and comments made by the team appear here.</p>`}
  </section></div>`;
}
