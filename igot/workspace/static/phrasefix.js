// Correcting a phrase in the transcript: its words in an inline editor (the ✎ on the phrase, or a
// double-click), who said it (its speaker's name, a phrase's ⋯ menu, or "Give to…" on selected
// words), split it before a selected word, join it with the next.
import { correct } from "./corrections.js";
import { state } from "./state.js";
import { clock, closePopover, place, speakerClass, toast, view } from "./ui.js";

// The tools of a phrase, at its end: one set for the whole transcript, moved to the phrase under the
// mouse (or, from the keyboard, to the first phrase of the turn whose name has the focus), so an
// hour's 1,400 phrases carry none of their own (drawing them cost ~160 ms). Shown on hover or when
// reached with Tab (workspace.css); their glyphs come from CSS, so they are not part of the phrase's
// text when it is selected or copied.
const TOOLS = `<button type="button" class="fix-words" data-fix="words" aria-label="Correct the words" title="Correct the words (or double-click the phrase)"></button>`
  + `<button type="button" class="fix-more" data-fix="more" aria-haspopup="menu" aria-label="More corrections" title="Who said it, join with the next"></button>`;

function tools() {
  let box = view.querySelector("#transcript .fix-tools");
  if (!box) {
    box = document.createElement("span");
    box.className = "fix-tools";
    box.innerHTML = TOOLS;
  }
  return box;
}

function placeTools(phrase) {
  if (!phrase || phrase.hidden || phrase.querySelector(":scope > .fix-tools")) return;
  const box = tools();
  if (box.contains(document.activeElement)) return;  // the keyboard is on them: they stay
  phrase.appendChild(box);
}

// The transcript's clicks and double-clicks that correct (interview.js leaves these to us).
export function wirePhraseFixes(transcript) {
  transcript.addEventListener("mouseover", (event) => {
    const phrase = event.target.closest(".phrase");
    // Not while a button is down: moving them in the middle of a selection would change it.
    if (phrase && !event.buttons && !event.target.closest(".fix-tools")) placeTools(phrase);
  });
  transcript.addEventListener("focusin", (event) => {
    const name = event.target.closest(".who-pick");
    if (name) placeTools(name.closest(".turn").querySelector(".phrase"));
  });
  transcript.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-fix], .who-pick");
    if (!button) return;
    if (button.classList.contains("who-pick")) return turnMenu(button);
    const i = Number(button.closest(".phrase").dataset.i);
    if (button.dataset.fix === "words") openEditor(i);
    else phraseMenu(button, i);
  });
  transcript.addEventListener("dblclick", (event) => {
    const phrase = event.target.closest(".phrase");
    if (phrase && !event.target.closest(".fix-tools")) openEditor(Number(phrase.dataset.i));
  });
}

// --- the words: an editor in place of the phrase ---------------------------------------------------
export function openEditor(i) {
  const el = state.phraseEls && state.phraseEls[i], p = state.interview.phrases[i];
  if (!el || !p) return;
  closeEditor();
  closePopover();
  window.getSelection().removeAllRanges();  // a double-click selected a word: no "Highlight" offer
  const box = document.createElement("span");
  box.className = "editor";
  const area = document.createElement("textarea");
  area.value = p.text;
  area.setAttribute("aria-label", `The words said at ${clock(p.start)}`);
  area.spellcheck = true;
  area.rows = 1;  // then as tall as its text (fit, below)
  const height = el.getBoundingClientRect().height;
  const buttons = document.createElement("span");
  buttons.className = "editor-buttons";
  const save = button("Save", "primary"), cancel = button("Cancel", "");
  const hint = document.createElement("span");
  hint.className = "hint";
  hint.textContent = "Enter saves · Shift+Enter a new line · Esc cancels";
  buttons.append(save, cancel, hint);
  box.append(area, buttons);
  el.hidden = true;
  el.after(box);
  // As tall as the phrase was, and as its text needs.
  const fit = () => { area.style.height = "auto"; area.style.height = `${Math.max(height + 12, area.scrollHeight + 2)}px`; };
  fit();
  area.addEventListener("input", fit);
  area.focus();
  area.setSelectionRange(area.value.length, area.value.length);
  const done = () => { closeEditor(); view.focus({ preventScroll: true }); };  // the page's keys work again
  const send = async () => {
    const text = area.value.replace(/\s+/g, " ").trim();
    if (text === p.text.replace(/\s+/g, " ").trim()) return done();
    save.disabled = true;
    const next = await correct({ kind: "words", phrase: i, text }, "Phrase corrected.");
    save.disabled = false;
    if (next) view.focus({ preventScroll: true });  // the editor went with the transcript redrawn
    else area.focus();  // refused: what was typed is kept
  };
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
    else if (event.key === "Escape") { event.preventDefault(); done(); }
  });
  save.addEventListener("click", send);
  cancel.addEventListener("click", done);
}

function closeEditor() {
  document.querySelectorAll("#transcript .editor").forEach((box) => {
    if (box.previousElementSibling) box.previousElementSibling.hidden = false;
    box.remove();
  });
}

function button(label, kind) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = kind;
  b.textContent = label;
  return b;
}

// --- menus ---------------------------------------------------------------------------------------------
// A small menu of `items` ([label, run] or [label, run, {current, colour}]) under `title`, beside
// `rect`; arrows move in it, Esc closes it (and gives the focus `back`), a click elsewhere too.
function menu(rect, title, items, back) {
  closePopover();
  const box = document.createElement("div");
  box.className = "popover menu";
  box.setAttribute("role", "menu");
  box.setAttribute("aria-label", title);
  const head = document.createElement("p");
  head.className = "menu-title";
  head.textContent = title;
  box.appendChild(head);
  items.forEach(([label, run, how = {}]) => {
    const b = button("", "menu-item");
    b.setAttribute("role", "menuitem");
    if (how.colour !== undefined) {
      const dot = document.createElement("span");
      dot.className = `dot ${speakerClass(how.colour)}`;
      b.appendChild(dot);
    }
    b.append(label);
    if (how.current) { b.disabled = true; b.title = "Says it now"; }
    b.addEventListener("click", () => { closePopover(); run(); });
    box.appendChild(b);
  });
  const buttons = () => [...box.querySelectorAll(".menu-item:not(:disabled)")];
  box.addEventListener("keydown", (event) => {
    const all = buttons(), at = all.indexOf(document.activeElement);
    if (event.key === "Escape") { event.preventDefault(); closePopover(); if (back) back.focus(); }
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      all[(at + (event.key === "ArrowDown" ? 1 : all.length - 1)) % all.length].focus();
    }
  });
  place(box, rect);
  const first = buttons()[0];
  if (first) first.focus({ preventScroll: true });
  setTimeout(() => document.addEventListener("mousedown", function away(event) {
    if (!box.contains(event.target)) box.remove();
    if (!box.isConnected) document.removeEventListener("mousedown", away);
  }), 0);
}

// Who may be chosen: the interview's speakers, then a new one. `current`: the one saying it now.
function speakerItems(current, give) {
  return [...state.interview.speakers.map((s) => [s.name || s.id, () => give(s.id), { current: s.id === current, colour: s.colour }]),
    ["New speaker", () => give("new")]];
}

function nameOf(id) {
  const s = state.interview.speakers.find((x) => x.id === id);
  return s ? s.name || s.id : "a new speaker";
}

// Where Esc gives the focus back: the button that opened the menu, when reached with the keyboard
// (with the mouse, a focused tool would stay shown over the next phrase's words).
function keyed(button) { return button.matches(":focus-visible") ? button : null; }

function phraseMenu(anchor, i) {
  const phrases = state.interview.phrases, p = phrases[i], back = keyed(anchor);
  const rect = anchor.getBoundingClientRect();  // now: the tools hide once the menu has the focus
  const items = [["Correct the words", () => openEditor(i)],
    ["Speaker…", () => speakerMenu(rect, i, p.speaker, back)]];
  if (i + 1 < phrases.length) items.push(["Join with next", () => correct({ kind: "join", phrase: i }, "Phrases joined.")]);
  menu(rect, `The phrase at ${clock(p.start)}`, items, back);
}

function speakerMenu(rect, i, current, back) {
  menu(rect, "Who said this?", speakerItems(current, (id) =>
    correct({ kind: "speaker", phrase: i, speaker: id }, `Given to ${nameOf(id)}.`)), back);
}

// A turn's name: the turn's phrases given to another speaker, one correction each (a new
// speaker is made by the first; the others go to that one).
function turnMenu(pick) {
  const indices = [...pick.closest(".turn").querySelectorAll(".phrase:not([hidden])")].map((el) => Number(el.dataset.i));
  const current = state.interview.phrases[indices[0]].speaker;
  const title = indices.length > 1 ? `Who said these ${indices.length} phrases?` : "Who said this?";
  menu(pick.getBoundingClientRect(), title, speakerItems(current, async (id) => {
    let to = id;
    for (const i of indices) {
      const next = await correct({ kind: "speaker", phrase: i, speaker: to });
      if (!next) return;
      to = next.phrases[i].speaker;
    }
    toast(`Given to ${nameOf(to)}.`);
  }), keyed(pick));
}

// --- words selected inside one phrase: give them to someone, or split before them -------------------------
// `one`: {i, first, last} (word indices); shown beside the selection's "Highlight" button.
export function offerFixes(one, beside) {
  const box = document.createElement("div");
  box.className = "popover offer-more";
  const give = button("Give to…", "");
  give.title = "These words were said by someone else (an interjection): give them to another speaker";
  box.appendChild(give);
  if (one.first >= 1) {
    const cut = button("Split here", "");
    cut.title = "Cut the phrase in two, before the first selected word";
    cut.addEventListener("click", () => {
      closePopover();
      window.getSelection().removeAllRanges();
      correct({ kind: "split", phrase: one.i, word: one.first }, "Phrase split.");
    });
    box.appendChild(cut);
  }
  box.querySelectorAll("button").forEach((b) => b.addEventListener("mousedown", (e) => e.preventDefault()));  // keep the selection
  give.addEventListener("click", () => {
    const rect = give.getBoundingClientRect();
    const p = state.interview.phrases[one.i];
    menu(rect, "Who said these words?", speakerItems(null, (id) => {
      window.getSelection().removeAllRanges();
      const whole = one.first === 0 && one.last === p.words.length - 1;
      correct(whole ? { kind: "speaker", phrase: one.i, speaker: id } : { kind: "speaker", phrase: one.i, speaker: id, first: one.first, last: one.last },
        `Given to ${nameOf(id)}.`);
    }));
  });
  const r = beside.getBoundingClientRect();
  place(box, r);
  // Beside the Highlight button (or below it, where the window ends).
  const right = r.right + 6 + box.offsetWidth < innerWidth - 8;
  box.style.left = `${right ? r.right + 6 : Math.max(8, r.left)}px`;
  box.style.top = `${right ? r.top : r.bottom + 6}px`;
}
