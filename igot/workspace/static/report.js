// Reports: the list (#/reports) and one report (#/report/ID): its title and findings, each finding
// with the highlights behind it (picked from the report's tags and themes, from any interviews),
// each playable in the pane; saved with the version read (a teammate's change meanwhile is said,
// and what was typed here stays on the page); downloaded as Markdown or HTML, sent to a Google Doc.
// "Make a report" (from a tag's page, the Themes board) is makeReport() below.
import { api, withToken } from "./api.js";
import { quotePane, wirePlayButtons } from "./pane.js";
import { shareButton } from "./share.js";
import { state } from "./state.js";
import { clock, esc, plural, setColours, speakerClass, toast, view } from "./ui.js";

const key = (c) => `${c.stem}/${c.highlight}`;

// Make a report from `sources` ([{kind: "tag", name} or {kind: "theme", name, highlights}]) and open it.
export async function makeReport(title, sources) {
  const made = await api("api/reports", { method: "POST", body: { title, sources } });
  location.hash = `#/report/${made.id}`;
}

export async function showReports() {
  const shown = state.shown;
  const data = await api("api/reports");
  if (shown !== state.shown) return;
  const rows = data.reports.map((r) => `<li><a href="#/report/${esc(r.id)}">${esc(r.title)}</a>
    <span class="count">${plural(r.findings, "finding")} · from ${r.sources.map((s) => esc(s.name)).join(", ")}${
      r.changed_by ? ` · changed by ${esc(r.changed_by)}` : ""}${r.google_doc ? ` · <a href="${esc(r.google_doc.doc)}" target="_blank" rel="noopener">Google Doc</a>` : ""}</span></li>`).join("");
  view.innerHTML = `<div class="page"><h1>Reports</h1>
    <p class="hint">A report is made from one or more tags (on a tag's page: <b>Make a report…</b>) or themes (on the
    <a href="#/themes">Themes</a> board: tick them, then <b>Make a report</b>).</p>
    ${data.problems.map((p) => `<p class="error">${esc(p)}</p>`).join("")}
    ${rows ? `<ul class="report-list">${rows}</ul>` : `<p class="empty">No report yet.</p>`}</div>`;
}

// --- one report ------------------------------------------------------------------------------
let current = null;  // {data: the server's view, draft: {title, findings}, dirty}

export async function showReport(id) {
  const shown = state.shown;
  const data = await api(`api/reports/${encodeURIComponent(id)}`);
  if (shown !== state.shown) return;
  setColours(data);
  current = { data, draft: draftOf(data), dirty: false };
  draw();
}

function draftOf(data) {
  return { title: data.title, findings: data.findings.map((f) => ({ text: f.text, highlights: f.quotes.map((q) => ({ stem: q.stem, highlight: q.highlight })) })) };
}

// Every quote the page knows, by STEM/ID: those of the findings (removed ones too) and the candidates.
function known() {
  const found = new Map();
  current.data.findings.forEach((f) => f.quotes.forEach((q) => found.set(key(q), q)));
  current.data.candidates.forEach((q) => found.set(key(q), q));
  return found;
}

function draw() {
  const { data, draft } = current;
  const quotes = known();
  const id = encodeURIComponent(data.id);
  view.innerHTML = `<div class="page with-pane"><div class="main-col report">
    <p class="crumbs"><a href="#/reports">Reports</a> ›</p>
    <input class="report-title" value="${esc(draft.title)}" maxlength="200" aria-label="The report's title">
    <p class="count">From ${data.sources.map((s) => s.kind === "tag"
      ? `<a class="tag" href="#/tag/${encodeURIComponent(s.name)}">${esc(s.name)}</a>` : `theme “${esc(s.name)}”`).join(" ")}${
      data.made_by ? ` · made by ${esc(data.made_by)}` : ""}${data.changed_by ? ` · changed by ${esc(data.changed_by)}` : ""}</p>
    <p class="tools"><button type="button" class="primary save-report">Save</button>
      <a class="button" href="${withToken(`api/reports/${id}/export?format=md`)}" download>Download Markdown</a>
      <a class="button" href="${withToken(`api/reports/${id}/export?format=html`)}" download>Download HTML</a>
      ${data.drive ? `<button type="button" class="button send-doc">${data.google_doc ? "Update the Google Doc" : "Send to Google Doc"}</button>` : ""}
      ${data.google_doc ? `<a href="${esc(data.google_doc.doc)}" target="_blank" rel="noopener">Open the Google Doc</a>` : ""}
      <button type="button" class="button copy-report-link" title="Copy this report's address for a teammate">Copy link</button>
      ${shareButton({ kind: "report", report: data.id, title: draft.title }, "Share…", "button")}
      <button type="button" class="button delete-report">Delete…</button>
      <span class="unsaved" ${current.dirty ? "" : "hidden"}>Unsaved changes</span></p>
    <div class="stale-slot"></div>
    <ol class="findings">${draft.findings.map((f, i) => findingHtml(f, i, quotes)).join("")}</ol>
    <p><button type="button" class="button add-finding">+ Add a finding</button></p>
    ${draft.findings.length ? "" : `<p class="empty">No finding yet: add one, then pick the highlights behind it.</p>`}
    </div>${quotePane()}</div>`;
  state.pane = view.querySelector(".pane");
  wire();
  wirePlayButtons();
}

function findingHtml(f, i, quotes) {
  const chosen = new Set(f.highlights.map(key));
  const pool = current.data.candidates.filter((q) => !chosen.has(key(q)));
  return `<li class="finding" data-i="${i}">
    <div class="finding-head"><textarea class="finding-text" rows="2" maxlength="4000" placeholder="What you found, in a sentence or two"
      aria-label="Finding ${i + 1}">${esc(f.text)}</textarea>
      <span class="finding-tools"><button type="button" class="link up" title="Move up" ${i ? "" : "disabled"}>↑</button>
      <button type="button" class="link down" title="Move down" ${i < current.draft.findings.length - 1 ? "" : "disabled"}>↓</button>
      <button type="button" class="link remove-finding" title="Remove this finding">Remove</button></span></div>
    ${f.highlights.map((c) => quoteHtml(quotes.get(key(c)) || { ...c, removed: true }, true)).join("")}
    <details class="pick"><summary>Add highlights (${pool.length} more from this report's tags and themes)</summary>
      ${pool.map((q) => `<label class="pick-one"><input type="checkbox" value="${esc(key(q))}"> “${esc(q.quote)}”
        <span class="count">${esc([q.speaker, q.interview, clock(q.start)].filter(Boolean).join(", "))}</span></label>`).join("") || `<p class="empty">Every one is under this finding.</p>`}
      ${pool.length ? `<button type="button" class="button add-picked">Add the ticked highlights</button>` : ""}</details></li>`;
}

function quoteHtml(q, removable) {
  const remove = removable ? `<button type="button" class="link unpick" data-key="${esc(key(q))}" title="Take it out of this finding">×</button>` : "";
  if (q.removed) {
    return `<figure class="quote removed" data-key="${esc(key(q))}"><blockquote>Removed: this highlight is no longer in ${
      q.interview ? `“${esc(q.interview)}”` : "its interview"}.</blockquote><figcaption>${remove}</figcaption></figure>`;
  }
  const clip = withToken(`api/interviews/${encodeURIComponent(q.stem)}/highlights/${encodeURIComponent(q.highlight)}/clip`);
  return `<figure class="quote ${speakerClass(q.colour)}" data-key="${esc(key(q))}" data-stem="${esc(q.stem)}" data-start="${q.start}" data-end="${q.end}">
    <blockquote>${esc(q.quote)}</blockquote>
    <figcaption><button type="button" class="play" title="Play this quote">▶ ${clock(q.start)}</button>
    ${q.speaker ? `<span class="who">${esc(q.speaker)}</span>` : ""}
    <a href="${esc(q.link)}">${esc(q.interview)}</a>
    <a href="${clip}" download title="This quote as a video clip">clip (MP4)</a>
    ${q.video ? `<a href="${esc(q.video)}" target="_blank" rel="noopener">video</a>` : ""}${remove}</figcaption></figure>`;
}

function changed() {
  current.dirty = true;
  const mark = view.querySelector(".unsaved");
  if (mark) mark.hidden = false;
}

function wire() {
  const { draft } = current;
  const title = view.querySelector(".report-title");
  title.addEventListener("input", () => { draft.title = title.value; changed(); });
  view.querySelectorAll(".finding").forEach((li) => {
    const i = Number(li.dataset.i), f = draft.findings[i];
    li.querySelector(".finding-text").addEventListener("input", (e) => { f.text = e.target.value; changed(); });
    const move = (to) => { draft.findings.splice(i, 1); draft.findings.splice(to, 0, f); changed(); draw(); };
    li.querySelector(".up").addEventListener("click", () => move(i - 1));
    li.querySelector(".down").addEventListener("click", () => move(i + 1));
    li.querySelector(".remove-finding").addEventListener("click", () => { draft.findings.splice(i, 1); changed(); draw(); });
    li.querySelectorAll(".unpick").forEach((b) => b.addEventListener("click", () => {
      f.highlights = f.highlights.filter((c) => key(c) !== b.dataset.key);
      changed();
      draw();
    }));
    const add = li.querySelector(".add-picked");
    if (add) add.addEventListener("click", () => {
      li.querySelectorAll(".pick-one input:checked").forEach((box) => {
        const [stem, highlight] = [box.value.slice(0, box.value.indexOf("/")), box.value.slice(box.value.indexOf("/") + 1)];
        f.highlights.push({ stem, highlight });
      });
      changed();
      draw();
    });
  });
  view.querySelector(".add-finding").addEventListener("click", () => {
    draft.findings.push({ text: "", highlights: [] });
    changed();
    draw();
    const boxes = view.querySelectorAll(".finding-text");
    boxes[boxes.length - 1].focus();
  });
  view.querySelector(".save-report").addEventListener("click", save);
  const send = view.querySelector(".send-doc");
  if (send) send.addEventListener("click", () => sendToDoc(send));
  view.querySelector(".copy-report-link").addEventListener("click", copyLink);
  view.querySelector(".delete-report").addEventListener("click", remove);
}

// Saved with the version this page read: a change made meanwhile (a teammate, another tab) is
// refused (409), said, and what was typed here stays; Save again keeps it over theirs.
async function save() {
  const { data, draft } = current;
  try {
    const next = await api(`api/reports/${encodeURIComponent(data.id)}`, { method: "PUT", body: { version: data.version, title: draft.title, findings: draft.findings } });
    current = { data: next, draft: draftOf(next), dirty: false };
    draw();
    toast("Report saved.");
  } catch (err) {
    toast(err.message, "error");
    if (err.status !== 409) return;
    const fresh = await api(`api/reports/${encodeURIComponent(data.id)}`).catch((again) => { toast(again.message, "error"); return null; });
    if (!fresh) return;  // deleted meanwhile: what was typed stays on the page
    current.data = fresh;  // its new version: Save again keeps what is typed here
    draw();
    view.querySelector(".stale-slot").innerHTML = `<p class="stale">This report was changed${fresh.changed_by ? ` by ${esc(fresh.changed_by)}` : ""} since you opened it.
      What you typed is kept here: <b>Save</b> again to keep yours, or <button type="button" class="button take-theirs">Show theirs</button> (yours is dropped).</p>`;
    view.querySelector(".take-theirs").addEventListener("click", () => { current = { data: fresh, draft: draftOf(fresh), dirty: false }; draw(); });
  }
}

async function sendToDoc(button) {
  if (current.dirty) { toast("Save the report first: the Doc is made from what is saved.", "error"); return; }
  button.disabled = true;
  button.textContent = "Sending to Google Drive…";
  try {
    const next = await api(`api/reports/${encodeURIComponent(current.data.id)}/drive`, { method: "POST", body: {} });
    current = { data: next, draft: draftOf(next), dirty: false };
    draw();
    toast("The Google Doc is up to date.");
  } catch (err) {
    toast(err.message, "error");
    button.disabled = false;
    button.textContent = "Send to Google Doc";
  }
}

async function copyLink() {
  const address = `${location.origin}${location.pathname}#/report/${encodeURIComponent(current.data.id)}`;
  try {
    await navigator.clipboard.writeText(address);
    toast("Link copied: a teammate who may read the library opens this report with it.");
  } catch (err) { toast(`Copy this address: ${address}`); }
}

async function remove() {
  if (!confirm(`Delete the report “${current.data.title}”? Its highlights stay in their interviews.`)) return;
  try {
    await api(`api/reports/${encodeURIComponent(current.data.id)}?version=${encodeURIComponent(current.data.version)}`, { method: "DELETE" });
    toast("Report deleted.");
    location.hash = "#/reports";
  } catch (err) { toast(err.message, "error"); }
}
