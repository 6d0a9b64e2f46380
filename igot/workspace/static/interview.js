// An interview's page (#/interview/STEM?t=SECONDS, or ?h=HIGHLIGHT: played from there, that phrase
// or highlight marked; "Copy link" under the player copies the moment playing): its player and
// facts, its highlights, and its transcript, where a click plays a phrase, a selection of words is
// highlighted, and a phrase is corrected (phrasefix.js). After a correction only the turns it
// changed are drawn again.
import { api, playable, withToken } from "./api.js";
import { canWrite, loadComments } from "./comments.js";
import { fixBarHtml, heardShown, setRedraw, wireFixBar } from "./corrections.js";
import { renderHighlights, setReadAgain } from "./highlights.js";
import { copyLink, copyLinkButton } from "./links.js";
import { wirePhraseFixes } from "./phrasefix.js";
import { createPlayer } from "./player.js";
import { goTo, mark, phraseAt, startTicking } from "./playback.js";
import { refreshReview, reviewHtml, startReview, wireReview } from "./review.js";
import { offerHighlight } from "./selection.js";
import { speakersHtml, wireSpeakers } from "./speakers.js";
import { state } from "./state.js";
import { summaryHtml, wireSummary } from "./summary.js";
import { clock, closePopover, esc, setColours, speakerClass, toast, view } from "./ui.js";

export async function showInterview(stem, params) {
  const shown = state.shown;
  const [data, lib] = await Promise.all([api(`api/interviews/${encodeURIComponent(stem)}`), api("api/tags")]);
  if (shown !== state.shown) return;
  setColours(data);
  state.tags = lib.tags.map((t) => t.tag);
  state.interview = data;
  state.linked = params.get("h");  // the highlight a link opened: marked (highlights.js)
  view.innerHTML = `<div class="interview">
    <aside class="side"><div class="player-box" id="player"></div>
      <p class="moment-link">${copyLinkButton("", "this moment of the interview", "Copy link to this moment")}</p>
      <div class="facts" id="facts"></div>
      <div id="summary"></div>
      ${reviewHtml()}
      <h2>Highlights <span class="count" id="hl-count"></span></h2><ul class="hl-list" id="hl-list"></ul>
      <p class="keys"><kbd>Space</kbd> play/pause · <kbd>↑</kbd><kbd>↓</kbd> phrase by phrase · select words to highlight · double-click a phrase to correct it</p>
    </aside>
    <section class="transcript${heardShown() ? " show-heard" : ""}" id="transcript" aria-label="Transcript"></section></div>`;
  loadComments(data.stem);  // a team's server: the highlights' comments (comments.js), drawn when they come
  draw(data);
  view.querySelector(".moment-link .copy-link").addEventListener("click", (e) => copyLink(momentHash(data.stem), e.currentTarget));
  const transcript = view.querySelector("#transcript");
  transcript.addEventListener("click", onTranscriptClick);
  if (canWrite()) {  // a team's viewer reads and comments, changes nothing
    transcript.addEventListener("mouseup", (e) => { if (!e.target.closest(".fix-tools, .who-pick, .editor")) setTimeout(offerHighlight, 0); });
    transcript.addEventListener("keyup", (e) => { if (e.shiftKey && !e.target.closest(".editor")) offerHighlight(); });
    wirePhraseFixes(transcript);
  }
  wireSummary(view.querySelector("#summary"));
  setRedraw(redraw);
  setReadAgain(readAgain);
  const reviewing = wireReview(view, params.get("review") === "1");
  state.player = await createPlayer(view.querySelector("#player"), playable(data.player));
  if (state.interview !== data) return;  // the user moved on while the player loaded
  startTicking();
  await reviewing;
  startReview();
  const t = Number(params.get("t"));
  if (params.has("t") && isFinite(t)) goTo(phraseAt(t), t);
  if (state.linked) openLinkedHighlight(data);
}

// The address of the moment playing, to the millisecond: phraseAt() finds the phrase it is in.
function momentHash(stem) {
  const t = state.player ? Math.round(state.player.time() * 1000) / 1000 : 0;
  return `#/interview/${encodeURIComponent(stem)}${t > 0 ? `?t=${t}` : ""}`;
}

// A link to a highlight: played from its start, its phrase marked, its item in the list in view.
function openLinkedHighlight(data) {
  const h = data.highlights.find((x) => x.id === state.linked);
  if (!h) {
    toast("The highlight this link points to is no longer in this interview (deleted since the link was made).", "error");
    return;
  }
  goTo(phraseAt(h.start), h.start);
  const item = view.querySelector(`#hl-list .hl-item[data-id="${CSS.escape(h.id)}"]`);
  if (item) item.scrollIntoView({ block: "nearest" });
}

// The transcript's turns as drawn: one element each, in order (see turnsOf).
let turns = [];

// The facts, transcript and highlights of `data`; the player is not touched.
function draw(data) {
  drawFacts(data);
  view.querySelector("#summary").innerHTML = summaryHtml(data);
  drawTranscript(data);
  indexPhrases(data);
}

function drawFacts(data) {
  const facts = view.querySelector("#facts");
  facts.innerHTML = `<h1>${esc(data.title)}</h1><p class="meta">${[data.created.slice(0, 10), data.language, clock(data.duration)].filter(Boolean).map(esc).join(" · ")}</p>
    ${fixBarHtml(data)}${speakersHtml(data)}
    <p class="files">${Object.entries(data.files).map(([k, href]) => `<a href="${esc(withToken(href))}" target="_blank" rel="noopener">${k.toUpperCase()}</a>`).join(" ")}</p>`;
  wireFixBar(facts);
  wireSpeakers(facts);
}

function drawTranscript(data) {
  const speakers = byId(data);
  turns = turnsOf(data.phrases);
  view.querySelector("#transcript").innerHTML = data.phrases.length ? turns.map((turn) => turnHtml(data, turn, speakers)).join("")
    : `<p class="empty">No speech was found in this recording.</p>`;
}

// What reads the transcript's elements: each phrase's, the phrases in time order, the highlights' marks.
function indexPhrases(data) {
  state.phraseEls = [...view.querySelectorAll("#transcript .phrase")];
  state.order = data.phrases.map((p, i) => i).sort((a, b) => data.phrases[a].start - data.phrases[b].start);
  renderHighlights();
}

// A correction drawn where the user is (`data`: the interview now; `replaced`: the phrases the
// answer replaced, views.correction_view): the same scroll, the same player, the phrase being said
// marked again. Later changes send its version.
function redraw(data, replaced) {
  const side = view.querySelector(".side"), y = scrollY, sideY = side ? side.scrollTop : 0, marked = state.now >= 0;
  const before = state.interview;
  closePopover();
  setColours(data);
  state.interview = data;
  state.now = -1;
  drawFacts(data);
  patchTranscript(before, data, replaced);
  indexPhrases(data);
  scrollTo(scrollX, y);
  if (side) side.scrollTop = sideY;
  if (marked && state.player) mark(phraseAt(state.player.time()), false);
  refreshReview();  // what the correction fixed leaves the Review list
}

// The interview shown read again (a change of this page was merged over a teammate's newer one)
// and drawn where the user is; not if the user moved on or changed it again meanwhile.
async function readAgain() {
  const data = state.interview;
  if (!data) return;
  const shown = state.shown, version = data.version;
  let fresh;
  try { fresh = await api(`api/interviews/${encodeURIComponent(data.stem)}`); } catch { return; }
  if (shown !== state.shown || !state.interview || state.interview.stem !== fresh.stem || state.interview.version !== version) return;
  refreshInterview(fresh);
}

// The interview as a teammate left it (`data`: api/interviews/STEM read again, team.js), drawn where
// the user is: the same scroll, the same player (not touched), the phrase being said marked again.
// The transcript is drawn again only when its phrases or speakers changed; else only the highlights.
export function refreshInterview(data) {
  const before = state.interview;
  if (!before || before.stem !== data.stem || !view.querySelector("#transcript")) return;
  const side = view.querySelector(".side"), y = scrollY, sideY = side ? side.scrollTop : 0;
  const same = JSON.stringify(before.phrases) === JSON.stringify(data.phrases)
    && JSON.stringify(before.speakers) === JSON.stringify(data.speakers);
  setColours(data);
  if (same) data.phrases = before.phrases;  // the very objects the transcript was drawn from
  state.interview = data;
  drawFacts(data);
  if (same) renderHighlights();
  else {
    const marked = state.now >= 0;
    closePopover();
    state.now = -1;
    drawTranscript(data);
    indexPhrases(data);
    if (marked && state.player) mark(phraseAt(state.player.time()), false);
  }
  scrollTo(scrollX, y);
  if (side) side.scrollTop = sideY;
  refreshReview();
}

// Only the turns that changed are drawn again (an hour has ~1,400 phrases): a turn is kept when it
// holds the same phrases (the very objects: the answer sends only the new ones) said by a speaker
// of the same name and colour; the phrases after the change are numbered anew when a split or a
// join changed how many there are.
function patchTranscript(before, data, replaced) {
  const box = view.querySelector("#transcript"), els = [...box.children];
  const after = turnsOf(data.phrases);
  if (!before.phrases.length || !data.phrases.length || els.length !== turns.length) return drawTranscript(data);
  const was = byId(before), speakers = byId(data);
  const same = (a, b) => a.to - a.from === b.to - b.from && a.speaker === b.speaker && look(was[a.speaker]) === look(speakers[b.speaker])
    && before.phrases.slice(a.from, a.to).every((p, k) => p === data.phrases[b.from + k]);
  let first = 0;
  while (first < turns.length && first < after.length && same(turns[first], after[first])) first++;
  let kept = 0;  // turns kept at the end
  while (kept < turns.length - first && kept < after.length - first
    && same(turns[turns.length - 1 - kept], after[after.length - 1 - kept])) kept++;
  const made = document.createElement("template");
  made.innerHTML = after.slice(first, after.length - kept).map((turn) => turnHtml(data, turn, speakers)).join("");
  els.slice(first, turns.length - kept).forEach((el) => el.remove());
  box.insertBefore(made.content, els[turns.length - kept] || null);
  const shift = replaced.phrases.length - replaced.removed;
  if (shift) {
    els.slice(turns.length - kept).forEach((el) => el.querySelectorAll(".phrase").forEach((p) => { p.dataset.i = Number(p.dataset.i) + shift; }));
  }
  turns = after;
}

// The transcript's turns, [from, to) phrase ranges: a speaker's phrases one after another. An
// empty phrase (drawn hidden) stays in the turn before it; those before anyone speaks are a turn
// of no one (speaker null), hidden.
function turnsOf(phrases) {
  const out = [];
  let last = null;
  phrases.forEach((p, i) => {
    if (p.text && p.speaker !== last) {
      out.push({ from: i, to: i + 1, speaker: p.speaker });
      last = p.speaker;
    } else if (out.length) out[out.length - 1].to = i + 1;
    else out.push({ from: i, to: i + 1, speaker: null });
  });
  return out;
}

function byId(data) {
  return Object.fromEntries(data.speakers.map((s) => [s.id, s]));
}

// What a turn's head shows of its speaker.
function look(s) {
  return s ? `${s.colour} ${s.name}` : "";
}

function turnHtml(data, turn, speakers) {
  let out = "";
  for (let i = turn.from; i < turn.to; i++) out += phraseHtml(data.phrases[i], i);
  if (turn.speaker === null) return `<div class="no-one" hidden>${out}</div>`;
  const s = speakers[turn.speaker] || { name: "", colour: 0 };
  // The name is a button: who said this turn can be corrected there.
  return `<div class="turn ${speakerClass(s.colour)}"><div class="head">${s.name ? `<button type="button" class="who-pick" aria-haspopup="menu" title="Who said this? Give it to another speaker"><b class="who">${esc(s.name)}</b></button>` : ""}<span class="time">${clock(data.phrases[turn.from].start)}</span></div><p>${out}</p></div>`;
}

function phraseHtml(p, i) {
  if (!p.text) return `<span class="phrase" data-i="${i}" hidden></span>`;
  // Each word in its own span (a selection is turned into times by its words), and the
  // space between two words too, so that a highlight is marked without gaps.
  let text = "", pos = 0;
  p.words.forEach(([c0, c1], k) => {
    const gap = p.text.slice(pos, c0);
    text += (gap && k ? `<span class="g">${esc(gap)}</span>` : esc(gap)) + `<span class="w" data-w="${k}">${esc(p.text.slice(c0, c1))}</span>`;
    pos = c1;
  });
  // A corrected phrase carries a mark; what the machine heard is beneath it, shown on demand.
  const fixed = p.heard !== null && p.heard !== undefined;
  const by = fixed && p.corrected_by ? ` by ${esc(p.corrected_by)}` : "";  // a team's server: who corrected it last
  return `<span class="phrase${fixed ? " fixed" : ""}" data-i="${i}" title="${clock(p.start)}${fixed ? ` · corrected${by}` : ""}">${text + esc(p.text.slice(pos))}${
    fixed ? `<span class="fixed-mark" title="Corrected${by}: the machine heard “${esc(p.heard)}”"></span>` : ""}</span> `
    + (fixed ? `<span class="heard" aria-label="What the machine heard">${esc(p.heard)}</span>` : "");
}

// A click plays the phrase; a click that ends a selection does not, nor one on a correction's tools.
function onTranscriptClick(event) {
  const phrase = event.target.closest(".phrase");
  if (!phrase || !window.getSelection().isCollapsed || event.target.closest(".fix-tools")) return;
  goTo(Number(phrase.dataset.i));
}
// The interview's keys, listened to once for the whole page: Space plays or pauses, the arrows go
// phrase by phrase, Escape closes a popover. Not while typing or on a control.
export function listenToKeys() {
  document.addEventListener("keydown", (event) => {
    if (!state.player || !state.phraseEls) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, button, a, [contenteditable], .popover")) return;
    if (event.key === " " || event.code === "Space") {
      event.preventDefault();
      state.player.toggle();
    } else if (["ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft"].includes(event.key) && !event.altKey && !event.metaKey && !event.ctrlKey) {
      event.preventDefault();
      const order = state.order;
      const here = order.indexOf(state.now >= 0 ? state.now : phraseAt(state.player.time()));
      let k = here + (event.key === "ArrowDown" || event.key === "ArrowRight" ? 1 : -1);
      while (k >= 0 && k < order.length && !state.interview.phrases[order[k]].text) k += Math.sign(k - here);  // past the hidden, empty ones
      if (k >= 0 && k < order.length) goTo(order[k]);
    } else if (event.key === "Escape") closePopover();
  });
}
