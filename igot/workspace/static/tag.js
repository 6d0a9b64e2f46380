// A tag's page (#/tag/NAME): its quotes by interview, each playable in the pane, its exports and
// its rename.
import { api, withToken } from "./api.js";
import { renameForm } from "./library.js";
import { copyLinkButton } from "./links.js";
import { quotePane, wirePlayButtons } from "./pane.js";
import { makeReport } from "./report.js";
import { shareButton } from "./share.js";
import { state } from "./state.js";
import { clock, esc, plural, setColours, speakerClass, toast, view } from "./ui.js";

export async function showTag(tag) {
  const shown = state.shown;
  const data = await api(`api/tag?name=${encodeURIComponent(tag)}`);
  if (shown !== state.shown) return;
  setColours(data);
  const groups = {};
  data.quotes.forEach((q) => { (groups[q.stem] = groups[q.stem] || []).push(q); });
  const list = Object.values(groups).map((qs) => `
    <section class="quotes"><h2><a href="#/interview/${encodeURIComponent(qs[0].stem)}">${esc(qs[0].interview)}</a>
    <span class="date">${esc(qs[0].date)}</span></h2>${qs.map(quoteCard).join("")}</section>`).join("");
  const enc = encodeURIComponent(tag);
  view.innerHTML = `<div class="page with-pane"><div class="main-col">
    <p class="crumbs"><a href="#/tags">Tags</a> ›</p>
    <h1 class="tag-title" data-tag="${esc(tag)}">${esc(tag)} <span class="count">${plural(data.quotes.length, "highlight")} in ${plural(data.interviews, "interview")}</span></h1>
    <p class="tools"><a class="button" href="${withToken(`api/tag/export?name=${enc}&format=md`)}" download>Export Markdown</a>
    <a class="button" href="${withToken(`api/tag/export?name=${enc}&format=csv`)}" download>Export CSV</a>
    <a class="button" href="${withToken(`api/tag/reel?name=${enc}`)}" download title="Every quote whose recording is on this computer, titled, one after the other">Reel (MP4)</a>
    ${copyLinkButton(`#/tag/${enc}`, "this tag's page")}
    ${shareButton({ kind: "reel", tag }, "Share reel…", "button")}
    <span class="rename-slot"><button type="button" class="button rename-tag">Rename or merge…</button></span>
    <button type="button" class="button make-report">Make a report…</button></p>
    <div class="report-slot"></div>
    ${list || `<p class="empty">No highlight has this tag.</p>`}</div>${quotePane()}</div>`;
  state.pane = view.querySelector(".pane");
  view.querySelector(".rename-tag").addEventListener("click", (e) => renameForm(e.target.parentElement, tag));
  view.querySelector(".make-report").addEventListener("click", () => reportForm(view.querySelector(".report-slot"), tag).catch((err) => toast(err.message, "error")));
  wirePlayButtons();
}

function quoteCard(q) {
  return `<figure class="quote ${speakerClass(q.colour)}" data-stem="${esc(q.stem)}" data-start="${q.start}" data-end="${q.end}">
    <blockquote>${esc(q.quote)}</blockquote>
    <figcaption><button type="button" class="play" title="Play this quote">▶ ${clock(q.start)}</button>
    ${q.speaker ? `<span class="who">${esc(q.speaker)}</span>` : ""}
    <a href="#/interview/${encodeURIComponent(q.stem)}?h=${encodeURIComponent(q.highlight)}">open in the interview</a>
    ${copyLinkButton(`#/interview/${encodeURIComponent(q.stem)}?h=${encodeURIComponent(q.highlight)}`, "this highlight")}
    ${q.video ? `<a href="${esc(q.video)}" target="_blank" rel="noopener">video</a>` : ""}
    ${q.note ? `<span class="note">${esc(q.note)}</span>` : ""}</figcaption></figure>`;
}

// A report made from this tag, and any other tags ticked: its title, then its page.
async function reportForm(where, tag) {
  const board = await api("api/tags");
  const others = board.tags.filter((t) => t.tag.toLowerCase() !== tag.toLowerCase());
  where.innerHTML = `<form class="report-form"><label>Title <input name="title" value="${esc(tag)}" maxlength="200"></label>
    ${others.length ? `<fieldset><legend>With the highlights of these tags too</legend>${others.map((t) => `<label class="pick-tag"><input type="checkbox" value="${esc(t.tag)}"> ${esc(t.tag)} <span class="count">${t.highlights}</span></label>`).join("")}</fieldset>` : ""}
    <div class="buttons"><button class="primary" type="submit">Make the report</button><button type="button" class="cancel">Cancel</button></div></form>`;
  const form = where.querySelector("form");
  form.title.select();
  form.querySelector(".cancel").addEventListener("click", () => { where.innerHTML = ""; });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const tags = [tag, ...[...form.querySelectorAll(".pick-tag input:checked")].map((box) => box.value)];
    makeReport(form.title.value, tags.map((name) => ({ kind: "tag", name }))).catch((err) => toast(err.message, "error"));
  });
}
