// An interview's highlights: marked on their words in the transcript and listed beside it; the
// form that makes or edits one (from the transcript, its list, or a search hit); deleting one.
// Every change names the interview's version it was made on: one made on a stale version is
// refused (409) and nothing is overwritten.
import { api, withToken } from "./api.js";
import { commentsHtml, keepFocus, wireComments } from "./comments.js";
import { copyLinkButton } from "./links.js";
import { goTo, phraseAt } from "./playback.js";
import { shareButton } from "./share.js";
import { reload, state } from "./state.js";
import { clock, closePopover, esc, place, speakerClass, toast, view } from "./ui.js";

// A word is in a highlight when its middle is.
function covered(word, h) {
  const middle = (word[2] + word[3]) / 2;
  return middle >= h.start - 1e-3 && middle <= h.end + 1e-3;
}

export function renderHighlights() {
  const data = state.interview;
  view.querySelectorAll(".w.hl, .g.hl").forEach((w) => { w.classList.remove("hl", "linked"); w.removeAttribute("data-tags"); w.removeAttribute("title"); });
  data.highlights.forEach((h) => {
    data.phrases.forEach((p, i) => {
      if (p.start > h.end + 1e-3 || p.end < h.start - 1e-3) return;
      const el = state.phraseEls[i];
      p.words.forEach((w, k) => {
        if (!covered(w, h)) return;
        const span = el.querySelector(`.w[data-w="${k}"]`);
        const tags = new Set((span.dataset.tags || "").split(", ").filter(Boolean));
        h.tags.forEach((t) => tags.add(t));
        span.classList.add("hl");
        if (h.id === state.linked) span.classList.add("linked");  // the highlight a link opened
        span.dataset.tags = [...tags].join(", ");
        span.title = [...tags].join(", ") || "highlight";
      });
    });
  });
  // The space between two highlighted words is highlighted too: no gaps in a quote.
  view.querySelectorAll(".g").forEach((g) => {
    const before = g.previousElementSibling, after = g.nextElementSibling;
    if (before && after && before.classList.contains("hl") && after.classList.contains("hl")) g.classList.add("hl");
    if (before && after && before.classList.contains("linked") && after.classList.contains("linked")) g.classList.add("linked");
  });
  document.getElementById("hl-count").textContent = data.highlights.length || "";
  const list = document.getElementById("hl-list");
  const focus = keepFocus();  // a comment being typed (comments.js) keeps the cursor
  const local = data.player.kind === "video" || data.player.kind === "audio";  // clips are cut from local recordings
  list.innerHTML = data.highlights.length ? data.highlights.map((h) => `
    <li class="hl-item ${speakerClass(h.colour)}${h.id === state.linked ? " linked" : ""}" data-id="${esc(h.id)}">
      <div class="hl-tags">${h.tags.map((t) => `<a class="tag" href="#/tag/${encodeURIComponent(t)}">${esc(t)}</a>`).join("") || `<span class="tag none">untagged</span>`}</div>
      <button type="button" class="quote-link" title="Play from here">“${esc(h.quote.length > 160 ? h.quote.slice(0, 157) + "…" : h.quote)}”</button>
      <div class="hl-by">${h.speaker ? `<span class="who">${esc(h.speaker)}</span> · ` : ""}${clock(h.start)}${h.by ? ` · <span class="hl-maker" title="Highlighted by ${esc(h.by)}">by ${esc(h.by)}</span>` : ""}
      ${copyLinkButton(`#/interview/${encodeURIComponent(data.stem)}?h=${encodeURIComponent(h.id)}`, "this highlight")}<button type="button" class="link edit">Edit</button><button type="button" class="link delete">Delete</button>${
        local ? `<a class="link clip" href="${withToken(`api/interviews/${encodeURIComponent(data.stem)}/highlights/${encodeURIComponent(h.id)}/clip`)}" download title="An MP4 of this highlight, titled">Clip</a>` : ""}${
        shareButton({ kind: "highlight", stem: data.stem, highlight: h.id, quote: h.quote })}</div>
      ${h.note ? `<p class="note">${esc(h.note)}</p>` : ""}${commentsHtml(h.id)}</li>`).join("")
    : `<li class="empty">Select words or phrases in the transcript to highlight them.</li>`;
  list.querySelectorAll(".hl-item").forEach((li) => {
    const h = data.highlights.find((x) => x.id === li.dataset.id);
    li.querySelector(".quote-link").addEventListener("click", () => goTo(phraseAt(h.start), h.start));
    li.querySelector(".edit").addEventListener("click", (e) => openHighlightForm(e.target.getBoundingClientRect(),
      { stem: data.stem, version: data.version, start: h.start, end: h.end, quote: h.quote, id: h.id, tags: h.tags, note: h.note }, applyChange));
    li.querySelector(".delete").addEventListener("click", (e) => confirmDelete(e.target, h));
  });
  wireComments(list, focus);
}

// The interview read again and drawn where the user is (interview.js registers it: no import of it).
let readAgain = () => {};
export function setReadAgain(fn) { readAgain = fn; }
// The interview shown read again whole (a change merged over a teammate's newer one: corrections.js too).
export function readInterviewAgain() { readAgain(); }

// The server's answer to a change (the new version and highlights) drawn on the interview shown;
// one made over a teammate's newer change (merged) is read again whole, to show theirs too.
export function applyChange(done) {
  if (!state.interview) return;
  state.interview.version = done.version;
  state.interview.highlights = done.highlights;
  renderHighlights();
  if (done.merged) readAgain();
}

// A first click arms the button, a second within 4 s deletes.
function confirmDelete(button, h) {
  if (button.dataset.sure !== "1") {
    button.dataset.sure = "1";
    button.textContent = "Delete? Click again";
    setTimeout(() => { button.dataset.sure = ""; button.textContent = "Delete"; }, 4000);
    return;
  }
  const data = state.interview;
  api(`api/interviews/${encodeURIComponent(data.stem)}/highlights/${encodeURIComponent(h.id)}?version=${encodeURIComponent(data.version)}`,
    { method: "DELETE" }).then((done) => { applyChange(done); toast("Highlight deleted."); })
    .catch((err) => staleOrError(err));
}

function staleOrError(err) {
  if (err.status === 409) {
    toast(err.message, "error");
    const list = document.getElementById("hl-list");
    if (list && !document.getElementById("reload-now")) {
      list.insertAdjacentHTML("beforebegin", `<p class="stale">This interview changed in another tab. <button type="button" id="reload-now" class="primary">Reload</button></p>`);
      document.getElementById("reload-now").addEventListener("click", () => reload());
    }
  } else toast(err.message, "error");
}

// The form for a new highlight of `what` ({stem, version, start, end, quote}) or an edit of one
// (with its id, tags and note), next to `rect`; done(the server's answer) once saved.
export function openHighlightForm(rect, what, done) {
  closePopover();
  const box = document.createElement("div");
  box.className = "popover form-pop";
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-label", what.id ? "Edit highlight" : "New highlight");
  box.appendChild(document.getElementById("highlight-form").content.cloneNode(true));
  const form = box.querySelector("form"), input = box.querySelector(".tag-input"), chips = box.querySelector(".chips");
  const error = box.querySelector(".form-error");
  box.querySelector(".hl-quote").textContent = `“${what.quote.length > 220 ? what.quote.slice(0, 217) + "…" : what.quote}” · ${clock(what.start)}`;
  box.querySelector("datalist").innerHTML = state.tags.map((t) => `<option value="${esc(t)}">`).join("");
  box.querySelector(".note").value = what.note || "";
  box.querySelector("button[type=submit]").textContent = what.id ? "Save changes" : "Save highlight";
  const tags = [];
  const addChip = (text) => {  // a tag typed twice, in any case, is kept once
    const tag = text.replace(/\s+/g, " ").trim();
    if (!tag || tags.some((t) => t.toLowerCase() === tag.toLowerCase())) return;
    tags.push(tag);
    const chip = document.createElement("span");
    chip.className = "chip";
    chip.textContent = tag;
    const x = document.createElement("button");
    x.type = "button";
    x.textContent = "×";
    x.title = `Remove ${tag}`;
    x.addEventListener("click", () => { tags.splice(tags.indexOf(tag), 1); chip.remove(); input.focus(); });
    chip.appendChild(x);
    chips.insertBefore(chip, input);
  };
  (what.tags || []).forEach(addChip);
  input.addEventListener("keydown", (e) => {
    if ((e.key === "Enter" || e.key === ",") && input.value.trim()) {
      e.preventDefault();
      addChip(input.value);
      input.value = "";
    } else if (e.key === "Backspace" && !input.value && tags.length) {
      tags.pop();
      chips.querySelectorAll(".chip")[tags.length].remove();
    }
  });
  input.addEventListener("input", () => {  // a suggestion picked from the list
    if (state.tags.includes(input.value)) { addChip(input.value); input.value = ""; }
  });
  box.querySelector(".cancel").addEventListener("click", () => closePopover());
  const send = (version) => {
    const body = { version, tags, note: box.querySelector(".note").value };
    const base = `api/interviews/${encodeURIComponent(what.stem)}/highlights`;
    return what.id ? api(`${base}/${encodeURIComponent(what.id)}`, { method: "PATCH", body })
      : api(base, { method: "POST", body: { ...body, start: what.start, end: what.end } });
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (input.value.trim()) { addChip(input.value); input.value = ""; }
    error.textContent = "";
    try {
      const result = await send(what.version);
      closePopover();
      what.tags = tags;
      state.tags = [...new Set([...state.tags, ...tags])];
      done(result);
    } catch (err) {
      error.textContent = err.message;
      if (err.status === 409) offerSaveAgain(error, what, send, done);
    }
  });
  place(box, rect);
  input.focus();
}

// Another tab changed the interview: nothing was overwritten. Read it again, keep what was typed
// in the form, and offer to save it on the new version.
function offerSaveAgain(error, what, send, done) {
  const again = document.createElement("button");
  again.type = "button";
  again.className = "primary";
  again.textContent = "Reload and save again";
  error.appendChild(document.createElement("br"));
  error.appendChild(again);
  again.addEventListener("click", async () => {
    try {
      const fresh = await api(`api/interviews/${encodeURIComponent(what.stem)}`);
      what.version = fresh.version;
      if (state.interview && state.interview.stem === what.stem) {
        state.interview.version = fresh.version;
        state.interview.highlights = fresh.highlights;
        renderHighlights();
      }
      const result = await send(fresh.version);
      closePopover();
      done(result);
    } catch (err2) { error.textContent = err2.message; }
  });
}
