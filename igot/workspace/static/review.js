// The interview's Review list, beside its player: the parts the machine may have got wrong (words
// it was unsure of, speech it could not write, a phrase that sounds like another speaker, words
// close to the glossary), in the order said. Each plays its moment; each is fixed (a correction)
// or accepted as right. Keys while the list is open: N next, P previous, A looks right, E correct
// the phrase, O take the offer (the glossary's word, or the other speaker).
import { api } from "./api.js";
import { correct } from "./corrections.js";
import { openEditor } from "./phrasefix.js";
import { goTo } from "./playback.js";
import { reload, state } from "./state.js";
import { esc, toast } from "./ui.js";

const KIND = { word: "Unsure", unwritten: "No words", speaker: "Who?", glossary: "Glossary" };
let box = null;
let list = null;  // {version, left, words, items}
let at = 0;  // the item in hand
let open = false;

export function reviewHtml() {
  return `<details class="review" id="review"><summary>Review <span class="count" id="review-left"></span></summary>
    <div class="review-body"><p class="keys"><kbd>N</kbd>/<kbd>P</kbd> next/previous · <kbd>A</kbd> looks right · <kbd>E</kbd> correct · <kbd>O</kbd> take the offer</p>
    <p class="review-words" id="review-words"></p>
    <ol class="review-list" id="review-list"></ol></div></details>`;
}

// Wire the list drawn by reviewHtml() and fetch its items; `opened`: open it at once (?review=1).
export async function wireReview(root, opened) {
  box = root.querySelector("#review");
  list = null;
  at = 0;
  open = Boolean(opened);
  box.open = open;
  box.addEventListener("toggle", () => { open = box.open; });
  box.addEventListener("click", onClick);
  await refreshReview();
}

// Play the first item, once the player is there (the page opened with ?review=1).
export function startReview() {
  if (open && list && list.items.length) goToItem(0);
}

// Read the list again: after a correction, what it fixed is gone.
export async function refreshReview() {
  const data = state.interview;
  if (!box || !data) return;
  let fresh;
  try { fresh = await api(`api/interviews/${encodeURIComponent(data.stem)}/review`); } catch { return; }
  if (state.interview !== data || !box.isConnected) return;
  if (fresh.version !== data.version) return;  // a newer change is on its way; its answer reads again
  list = fresh;
  at = Math.min(at, Math.max(list.items.length - 1, 0));
  draw();
}

function draw() {
  box.querySelector("#review-left").textContent = list.left ? String(list.left) : "✓";
  // how many words are listed and why: the rule is a threshold, said so the researcher can judge it
  box.querySelector("#review-words").textContent = list.words || "";
  const items = list.items;
  box.querySelector("#review-list").innerHTML = items.length ? items.map((item, k) => `
    <li class="review-item${k === at ? " current" : ""}" data-k="${k}">
      <button type="button" class="link play" title="Play this moment">▶ ${esc(item.clock)}</button>
      <span class="kind kind-${esc(item.kind)}">${esc(KIND[item.kind] || item.kind)}</span>
      ${item.text ? `<q>${esc(item.text)}</q>` : ""} <span class="who">${esc(item.speaker)}</span>
      <div class="why">${esc(item.why)}</div>
      <div class="actions">${offerButton(item)}
        ${item.phrase !== null ? `<button type="button" class="fix">Correct</button>` : ""}
        <button type="button" class="accept">Looks right</button></div>
    </li>`).join("") : `<li class="empty">Nothing left to review.</li>`;
}

function offerButton(item) {
  if (item.kind === "glossary") return `<button type="button" class="offer primary">Write “${esc(item.offer)}”</button>`;
  if (item.kind === "speaker") {
    const who = state.interview.speakers.find((s) => s.id === item.offer);
    return `<button type="button" class="offer primary">Give to ${esc(who ? who.name : item.offer)}</button>`;
  }
  return "";
}

function onClick(event) {
  const li = event.target.closest(".review-item");
  if (!li) return;
  const k = Number(li.dataset.k);
  if (event.target.closest(".accept")) accept(k);
  else if (event.target.closest(".fix")) fix(k);
  else if (event.target.closest(".offer")) takeOffer(k);
  else goToItem(k);
}

function goToItem(k) {
  if (!list || !list.items.length) return;
  at = Math.max(0, Math.min(k, list.items.length - 1));
  const item = list.items[at];
  box.querySelectorAll(".review-item").forEach((li) => li.classList.toggle("current", Number(li.dataset.k) === at));
  const li = box.querySelector(`.review-item[data-k="${at}"]`);
  if (li) li.scrollIntoView({ block: "nearest" });
  if (item.phrase !== null && item.phrase !== undefined) goTo(item.phrase, item.start);
}

async function accept(k) {
  const data = state.interview;
  const item = list.items[k];
  try {
    const answer = await api(`api/interviews/${encodeURIComponent(data.stem)}/review`,
      { method: "POST", body: { version: data.version, accept: item.id } });
    if (state.interview !== data) return;
    data.version = answer.version;  // the interview's file changed: the next correction names this
    list = answer;
    at = Math.min(k, Math.max(list.items.length - 1, 0));
    draw();
    if (open) goToItem(at);
  } catch (err) {
    if (err.status === 409) toast(err.message, "error", { label: "Reload", run: () => reload() });
    else toast(err.message, "error");
  }
}

function fix(k) {
  const item = list.items[k];
  at = k;
  if (item.phrase !== null) openEditor(item.phrase);
}

async function takeOffer(k) {
  const item = list.items[k];
  const p = state.interview.phrases[item.phrase];
  at = k;
  let done = null;
  if (item.kind === "glossary") {
    const [c0] = p.words[item.first];
    const c1 = p.words[item.last][1];
    const tail = (p.text.slice(c0, c1).match(/[.,!?;:]+$/) || [""])[0];  // the sentence's mark stays
    done = await correct({ kind: "words", phrase: item.phrase, text: p.text.slice(0, c0) + item.offer + tail + p.text.slice(c1) },
      `Written “${item.offer}”.`);
  } else if (item.kind === "speaker") {
    done = await correct({ kind: "speaker", phrase: item.phrase, speaker: item.offer }, "Given to the other speaker.");
  }
  if (done) await refreshReview();
}

// The list's keys, while it is open and nothing is being typed.
export function listenToReviewKeys() {
  document.addEventListener("keydown", (event) => {
    if (!open || !list || !box || !box.isConnected || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, [contenteditable], .popover, .editor")) return;
    const key = event.key.toLowerCase();
    if (key === "n") goToItem(at + 1);
    else if (key === "p") goToItem(at - 1);
    else if (key === "a" && list.items.length) accept(at);
    else if (key === "e" && list.items.length) fix(at);
    else if (key === "o" && list.items.length && list.items[at].offer) takeOffer(at);
    else return;
    event.preventDefault();
  });
}
