// An interview's page (#/interview/STEM?t=SECONDS): its player and facts, its highlights, and
// its transcript, where a click plays a phrase and a selection of words is highlighted.
import { api, playable, withToken } from "./api.js";
import { renderHighlights } from "./highlights.js";
import { createPlayer } from "./player.js";
import { goTo, phraseAt, startTicking } from "./playback.js";
import { offerHighlight } from "./selection.js";
import { state } from "./state.js";
import { clock, closePopover, esc, setColours, speakerClass, view } from "./ui.js";

export async function showInterview(stem, params) {
  const [data, lib] = await Promise.all([api(`api/interviews/${encodeURIComponent(stem)}`), api("api/tags")]);
  setColours(data);
  state.tags = lib.tags.map((t) => t.tag);
  state.interview = data;
  const speakers = data.speakers.filter((s) => s.name);
  view.innerHTML = `<div class="interview">
    <aside class="side"><div class="player-box" id="player"></div>
      <div class="facts"><h1>${esc(data.title)}</h1><p class="meta">${[data.created.slice(0, 10), data.language, clock(data.duration)].filter(Boolean).map(esc).join(" · ")}</p>
      <p class="speakers">${speakers.map((s) => `<span class="who ${speakerClass(s.colour)}">${esc(s.name)}</span>`).join(" ")}</p>
      <p class="files">${Object.entries(data.files).map(([k, href]) => `<a href="${esc(withToken(href))}" target="_blank" rel="noopener">${k.toUpperCase()}</a>`).join(" ")}</p></div>
      <h2>Highlights <span class="count" id="hl-count"></span></h2><ul class="hl-list" id="hl-list"></ul>
      <p class="keys"><kbd>Space</kbd> play/pause · <kbd>↑</kbd><kbd>↓</kbd> phrase by phrase · select words to highlight</p>
    </aside>
    <section class="transcript" id="transcript" aria-label="Transcript">${transcriptHtml(data)}</section></div>`;
  state.phraseEls = [...view.querySelectorAll(".phrase")];
  state.order = data.phrases.map((p, i) => i).sort((a, b) => data.phrases[a].start - data.phrases[b].start);
  renderHighlights();
  const transcript = view.querySelector("#transcript");
  transcript.addEventListener("click", onTranscriptClick);
  transcript.addEventListener("mouseup", () => setTimeout(offerHighlight, 0));
  transcript.addEventListener("keyup", (e) => { if (e.shiftKey) offerHighlight(); });
  state.player = await createPlayer(view.querySelector("#player"), playable(data.player));
  if (state.interview !== data) return;  // the user moved on while the player loaded
  startTicking();
  const t = Number(params.get("t"));
  if (params.has("t") && isFinite(t)) goTo(phraseAt(t), t);
}

function transcriptHtml(data) {
  if (!data.phrases.length) return `<p class="empty">No speech was found in this recording.</p>`;
  const colour = Object.fromEntries(data.speakers.map((s) => [s.id, s]));
  let out = "", last = null;
  data.phrases.forEach((p, i) => {
    if (!p.text) { out += `<span class="phrase" data-i="${i}" hidden></span>`; return; }
    if (last === null || p.speaker !== last) {
      if (last !== null) out += "</p></div>";
      const s = colour[p.speaker] || { name: "", colour: 0 };
      out += `<div class="turn ${speakerClass(s.colour)}"><div class="head">${s.name ? `<b class="who">${esc(s.name)}</b>` : ""}<span class="time">${clock(p.start)}</span></div><p>`;
      last = p.speaker;
    }
    // Each word in its own span (a selection is turned into times by its words), and the
    // space between two words too, so that a highlight is marked without gaps.
    let text = "", pos = 0;
    p.words.forEach(([c0, c1], k) => {
      const gap = p.text.slice(pos, c0);
      text += (gap && k ? `<span class="g">${esc(gap)}</span>` : esc(gap)) + `<span class="w" data-w="${k}">${esc(p.text.slice(c0, c1))}</span>`;
      pos = c1;
    });
    out += `<span class="phrase" data-i="${i}" title="${clock(p.start)}">${text + esc(p.text.slice(pos))}</span> `;
  });
  return out + "</p></div>";
}

// A click plays the phrase; a click that ends a selection does not.
function onTranscriptClick(event) {
  const phrase = event.target.closest(".phrase");
  if (!phrase || !window.getSelection().isCollapsed) return;
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
