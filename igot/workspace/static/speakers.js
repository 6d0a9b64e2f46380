// The interview's speakers in its header, and the panel that names them: a ▶ plays a sample of each
// (to hear who is who), and two speakers given one name become one person (the server merges them).
import { correct } from "./corrections.js";
import { goTo } from "./playback.js";
import { state } from "./state.js";
import { esc, speakerClass, toast } from "./ui.js";

const SAMPLE = 8;   // seconds of a speaker's sample at most
let open = false;   // the panel stays open while the page is redrawn after a correction

export function speakersHtml(data) {
  const named = data.speakers.filter((s) => s.name);
  if (!named.length) return "";
  return `<p class="speakers">${named.map((s) => `<span class="who ${speakerClass(s.colour)}">${esc(s.name)}</span>`).join(" ")}
    <button type="button" class="link names-open" aria-expanded="${open}" aria-controls="names-panel">Names…</button></p>
    <form class="names-panel" id="names-panel" autocomplete="off"${open ? "" : " hidden"}>
      <h2>Speakers</h2>
      ${named.map((s) => `<div class="name-row ${speakerClass(s.colour)}"><span class="swatch" aria-hidden="true"></span>
        <input type="text" maxlength="80" data-id="${esc(s.id)}" value="${esc(s.given || s.name)}" aria-label="Name of ${esc(s.name)}">
        <button type="button" class="sample" data-id="${esc(s.id)}" title="Play ${esc(s.name)}'s longest phrase" aria-label="Play a sample of ${esc(s.name)}">▶</button>
        ${s.recognised ? `<span class="recognised">recognised by voice</span> <button type="button" class="accept-name" data-id="${esc(s.id)}">Accept</button>` : ""}</div>`).join("")}
      <p class="hint">Give two speakers the same name to make them one person. A name recognised by voice waits for you: listen, then accept it or type another.</p>
      <div class="buttons"><button type="submit" class="primary">Save names</button><button type="button" class="names-close">Close</button></div>
    </form>`;
}

export function wireSpeakers(box) {
  const panel = box.querySelector(".names-panel"), opener = box.querySelector(".names-open");
  if (!panel) return;
  const show = (yes) => { open = yes; panel.hidden = !yes; opener.setAttribute("aria-expanded", String(yes)); };
  opener.addEventListener("click", () => { show(panel.hidden); if (open) panel.querySelector("input").focus(); });
  panel.querySelector(".names-close").addEventListener("click", () => { show(false); opener.focus(); });
  panel.querySelectorAll(".sample").forEach((b) => b.addEventListener("click", () => playSample(b.dataset.id)));
  // Accepting a recognised name is giving it again: it is then the researcher's, on every page.
  panel.querySelectorAll(".accept-name").forEach((b) => b.addEventListener("click", async () => {
    const s = state.interview.speakers.find((x) => x.id === b.dataset.id);
    if (s && await correct({ kind: "names", names: { [s.id]: s.given } })) toast(`${s.given}: accepted.`);
  }));
  panel.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = state.interview, names = {};
    panel.querySelectorAll("input[data-id]").forEach((input) => {
      const s = data.speakers.find((x) => x.id === input.dataset.id), name = input.value.replace(/\s+/g, " ").trim();
      if (s && name && name !== (s.given || s.name)) names[s.id] = name;  // only what was changed: an empty field keeps its name
    });
    if (!Object.keys(names).length) return toast("The names are as they were.");
    const next = await correct({ kind: "names", names });
    if (next) toast(next.speakers.length < data.speakers.length ? "Names saved: the speakers given one name are now one person." : "Names saved.");
  });
}

// The speaker's longest phrase, up to SAMPLE seconds, in the page's player.
function playSample(id) {
  const phrases = state.interview.phrases;
  let best = -1;
  phrases.forEach((p, i) => {
    if (p.speaker === id && p.text && (best < 0 || p.end - p.start > phrases[best].end - phrases[best].start)) best = i;
  });
  if (best < 0 || !state.player) return;
  goTo(best);
  state.clipEnd = Math.min(phrases[best].end, phrases[best].start + SAMPLE);  // after goTo, which clears it
  Promise.resolve(state.player.play()).catch(() => {});
}
