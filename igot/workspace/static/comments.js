// Comments on an interview's highlights, on a team's server only: under each highlight in the
// interview's list, "Comments (n)" opens its thread (each comment: who, when, what; Delete on your
// own) and a box to add one (a viewer may comment too). Read with one request when the interview
// opens; a teammate's new comment arrives through team.js's polling (loadComments again). What is
// typed and which threads are open survive the list being drawn again.
import { api } from "./api.js";
import { emailOf, whenHtml, whoOf } from "./activity.js";
import { state } from "./state.js";
import { esc, toast, view } from "./ui.js";

let stemOf = null;         // the interview the threads are of
let threads = {};          // highlight id -> its comments, oldest first
let loaded = false;        // whether they were read (the counts are shown once they are)
const opened = new Set();  // highlight ids whose thread is open
const drafts = new Map();  // highlight id -> what is typed, not sent yet

// On a team's server: whether the person signed in may change the library (a viewer may not).
// One person's workspace: always.
export function canWrite() { return !state.me || Boolean(state.me.can && state.me.can.write); }
function canComment() { return Boolean(state.me && (!state.me.can || state.me.can.comment !== false)); }

// The interview `stem` is opened: its threads are read (another interview's are forgotten).
export async function loadComments(stem) {
  if (!state.me) return;
  if (stemOf !== stem) {
    stemOf = stem;
    threads = {};
    loaded = false;
    opened.clear();
    drafts.clear();
  }
  const shown = state.shown;
  let got;
  try {
    got = await api(`api/interviews/${encodeURIComponent(stem)}/comments`);
  } catch (err) {
    if (err.status !== 401 && shown === state.shown) toast(`Comments: ${err.message}`, "error");
    return;
  }
  if (shown !== state.shown || stemOf !== stem) return;
  threads = {};
  loaded = true;
  Object.entries(got.threads || {}).forEach(([hid, list]) => {
    threads[hid] = (list || []).slice().sort((a, b) => String(a.created || "").localeCompare(String(b.created || "")));
  });
  view.querySelectorAll("#hl-list .comments").forEach(drawThread);
}

// A highlight's comments part, in its item of the list (highlights.js).
export function commentsHtml(hid) {
  if (!state.me || !state.interview || state.interview.stem !== stemOf) return "";
  const open = opened.has(hid);
  return `<div class="comments" data-hid="${esc(hid)}">
    <button type="button" class="link comments-toggle" aria-expanded="${open}">${toggleText(hid)}</button>
    <div class="comments-thread"${open ? "" : " hidden"}><ul class="comments-list">${listHtml(hid)}</ul>
      ${canComment() ? `<form class="comment-form" autocomplete="off">
        <textarea class="comment-text" rows="2" maxlength="2000" placeholder="Add a comment…" aria-label="Comment on this highlight">${esc(drafts.get(hid) || "")}</textarea>
        <div class="buttons"><button type="submit" class="primary comment-send">Comment</button><span class="hint">Ctrl+Enter sends</span></div></form>` : ""}
    </div></div>`;
}

function toggleText(hid) {
  return loaded ? `Comments (${(threads[hid] || []).length})` : "Comments";
}

function listHtml(hid) {
  const mine = String(state.me.email || "").toLowerCase();
  const list = threads[hid] || [];
  if (!list.length) return `<li class="empty">No comments yet.</li>`;
  return list.map((c) => `<li class="comment" data-id="${esc(c.id)}">
    <span class="comment-who">${esc(whoOf(c))}</span> <span class="comment-time">${whenHtml(c.created || c.at)}</span>${
    emailOf(c) === mine || (state.me.can && state.me.can.manage) ? ` <button type="button" class="link comment-delete">Delete</button>` : ""}
    <p class="comment-body">${esc(c.text)}</p></li>`).join("");
}

// Only the thread's list and count: the box being typed in is left as it is.
function drawThread(box) {
  const hid = box.dataset.hid;
  box.querySelector(".comments-toggle").textContent = toggleText(hid);
  box.querySelector(".comments-list").innerHTML = listHtml(hid);
}

// The list of highlights was drawn (highlights.js): wire each comments part; `focus` (from
// keepFocus) puts the cursor back where it was typing.
export function wireComments(list, focus) {
  if (!state.me) return;
  list.querySelectorAll(".comments").forEach((box) => {
    const hid = box.dataset.hid, thread = box.querySelector(".comments-thread"), toggle = box.querySelector(".comments-toggle");
    toggle.addEventListener("click", () => {
      const open = thread.hidden;
      thread.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      if (open) { opened.add(hid); const area = box.querySelector(".comment-text"); if (area) area.focus(); } else opened.delete(hid);
    });
    box.querySelector(".comments-list").addEventListener("click", (e) => {
      const button = e.target.closest(".comment-delete");
      if (button) remove(button, hid);
    });
    const form = box.querySelector(".comment-form");
    if (!form) return;
    const area = form.querySelector(".comment-text");
    area.addEventListener("input", () => { if (area.value) drafts.set(hid, area.value); else drafts.delete(hid); });
    area.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener("submit", (e) => { e.preventDefault(); send(form, hid); });
  });
  if (focus && focus.hid) {
    const area = [...list.querySelectorAll(".comments")].find((b) => b.dataset.hid === focus.hid);
    const text = area && area.querySelector(".comment-text");
    if (text) { text.focus(); text.setSelectionRange(focus.from, focus.to); }
  }
}

// Before the list is drawn again: where the cursor is in a comment box, if it is in one.
export function keepFocus() {
  const el = document.activeElement;
  if (!el || !el.classList || !el.classList.contains("comment-text")) return null;
  const box = el.closest(".comments");
  return box ? { hid: box.dataset.hid, from: el.selectionStart, to: el.selectionEnd } : null;
}

async function send(form, hid) {
  const area = form.querySelector(".comment-text"), button = form.querySelector(".comment-send");
  const text = area.value.trim();
  if (!text) { area.focus(); return; }
  const stem = stemOf;
  button.disabled = true;
  try {
    const made = await api(`api/interviews/${encodeURIComponent(stem)}/highlights/${encodeURIComponent(hid)}/comments`,
      { method: "POST", body: { text } });
    if (stemOf !== stem) return;
    drafts.delete(hid);
    const list = threads[hid] || (threads[hid] = []);
    if (!list.some((c) => c.id === made.id)) list.push({ name: state.me.name, email: state.me.email, ...made });
    const box = form.closest(".comments");
    if (box && box.isConnected) {
      area.value = "";
      drawThread(box);
    } else view.querySelectorAll("#hl-list .comments").forEach(drawThread);
  } catch (err) {
    if (err.status !== 401) toast(err.message, "error");
  } finally {
    button.disabled = false;
  }
}

// A first click arms the button, a second within 4 s deletes (as a highlight's Delete).
async function remove(button, hid) {
  if (button.dataset.sure !== "1") {
    button.dataset.sure = "1";
    button.textContent = "Delete? Click again";
    setTimeout(() => { if (button.isConnected) { button.dataset.sure = ""; button.textContent = "Delete"; } }, 4000);
    return;
  }
  const id = button.closest(".comment").dataset.id, stem = stemOf;
  button.disabled = true;
  try {
    await api(`api/comments/${encodeURIComponent(id)}`, { method: "DELETE" });
    if (stemOf !== stem) return;
    threads[hid] = (threads[hid] || []).filter((c) => String(c.id) !== id);
    view.querySelectorAll("#hl-list .comments").forEach(drawThread);
  } catch (err) {
    button.disabled = false;
    if (err.status !== 401) toast(err.message, "error");
  }
}
