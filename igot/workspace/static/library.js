// The library's page (#/): its interviews and the tags board; #/tags shows the board alone.
// A tag is renamed, or merged into another, from the board or from its own page.
import { mountAdding } from "./add.js";
import { api } from "./api.js";
import { reload, state } from "./state.js";
import { clock, esc, plural, setColours, toast, view } from "./ui.js";

export async function showLibrary(tagsOnly) {
  const shown = state.shown;
  const data = await api("api/library");
  if (shown !== state.shown) return;  // the user moved on (searched, opened an interview) meanwhile
  setColours(data);
  state.tags = data.tags.map((t) => t.tag);
  const rows = data.interviews.map((iv) => `
    <tr><td><a class="title" href="#/interview/${encodeURIComponent(iv.stem)}">${esc(iv.name)}</a></td>
    <td>${esc(iv.date)}</td><td>${esc(iv.language)}</td><td class="num">${clock(iv.duration)}</td>
    <td>${esc(iv.speakers.join(", "))}</td><td class="num">${iv.highlights || ""}</td>
    <td class="num review-left" data-stem="${esc(iv.stem)}"></td></tr>`).join("");
  const skipped = data.skipped.length ? `<div class="skipped"><b>${plural(data.skipped.length, "file")} skipped:</b><ul>${
    data.skipped.map((s) => `<li><code>${esc(s.file)}</code>: ${esc(s.why)}</li>`).join("")}</ul></div>` : "";
  const interviews = tagsOnly ? "" : `
    <section><h1>Interviews <span class="count">${data.interviews.length}</span></h1><div id="adding"></div>${skipped}
    ${data.interviews.length ? `<table class="list"><thead><tr><th>Interview</th><th>Date</th><th>Language</th>
    <th class="num">Length</th><th>Speakers</th><th class="num">Highlights</th>
    <th class="num" title="Parts the machine may have got wrong, left to check">To review</th></tr></thead><tbody>${rows}</tbody></table>`
      : `<p class="empty">No interviews in this folder yet: add recordings above, or <code>igot run</code> them with <code>--out</code> this folder.</p>`}
    </section>`;
  view.innerHTML = `<div class="page">${interviews}<section id="board"><h${tagsOnly ? 1 : 2}>Tags <span class="count">${data.tags.length}</span></h${tagsOnly ? 1 : 2}>
    ${boardTable(data.tags)}</section></div>`;
  wireRenames(view);
  if (!tagsOnly) mountAdding(view.querySelector("#adding"));
  if (!tagsOnly && data.interviews.length) fillReviewCounts(shown);
}

// How many parts are left to review in each interview: counted after the page is drawn, since a
// library's first count reads every interview's words.
async function fillReviewCounts(shown) {
  let counts;
  try { counts = await api("api/review/left"); } catch { return; }
  if (shown !== state.shown) return;  // the user moved on
  view.querySelectorAll("td.review-left").forEach((cell) => {
    const n = counts[cell.dataset.stem];
    if (n) cell.innerHTML = `<a href="#/interview/${encodeURIComponent(cell.dataset.stem)}?review=1" title="Open its Review list">${n}</a>`;
    else if (n === 0) cell.textContent = "✓";
  });
}

function boardTable(tags) {
  if (!tags.length) return `<p class="empty">No highlights yet. Open an interview, select words in its transcript and tag them.</p>`;
  return `<table class="list board"><thead><tr><th>Tag</th><th class="num">Highlights</th><th class="num">Interviews</th>
    <th class="num">People</th><th></th></tr></thead><tbody>${tags.map((t) => `
    <tr data-tag="${esc(t.tag)}"><td><a class="tag" href="#/tag/${encodeURIComponent(t.tag)}">${esc(t.tag)}</a></td>
    <td class="num highlights">${t.highlights}</td><td class="num interviews">${t.interviews}</td><td class="num people">${t.people}</td>
    <td class="actions"><button type="button" class="link rename">Rename or merge</button></td></tr>`).join("")}</tbody></table>`;
}

function wireRenames(root) {
  root.querySelectorAll("button.rename").forEach((button) => button.addEventListener("click", () => {
    const old = button.closest("[data-tag]").dataset.tag;
    renameForm(button.parentElement, old);
  }));
}

// The form that renames tag `old` in every interview, drawn in `where`; a tag's page follows the
// tag to its new name.
export function renameForm(where, old) {
  where.innerHTML = `<form class="rename-form"><input name="new" value="${esc(old)}" maxlength="60" aria-label="New name for ${esc(old)}">
    <button class="primary" type="submit">Rename</button><button type="button" class="cancel">Cancel</button></form>`;
  const form = where.querySelector("form");
  form.new.select();
  form.querySelector(".cancel").addEventListener("click", () => reload());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const done = await api("api/tags/rename", { method: "POST", body: { old, new: form.new.value } });
      toast(`"${old}" is now "${form.new.value.trim()}" in ${plural(done.changed.length, "interview")}.`);
      const next = `#/tag/${encodeURIComponent(form.new.value.trim())}`;
      if (location.hash.startsWith("#/tag/")) location.hash = next; else reload();
    } catch (err) { toast(err.message, "error"); }
  });
}
