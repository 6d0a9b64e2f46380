// Corrections to what the machine got wrong (issue 39): each is sent to the server, which answers
// with what it changed (views.correction_view: the phrases replaced, the speakers, highlights and
// corrections); the page patches what it shows (the player left as it is). Also here, the
// interview header's part: Undo, and "Show what the machine heard".
import { api } from "./api.js";
import { readInterviewAgain } from "./highlights.js";
import { reload, state } from "./state.js";
import { esc, toast } from "./ui.js";

// What Undo takes back, by the kind of the last correction (views.py: corrections.last).
const UNDOES = {
  words: "the corrected words of a phrase",
  speaker: "who said a phrase",
  split: "a phrase split in two",
  join: "two phrases joined",
  names: "the speakers' names",
};

let redraw = () => {};  // interview.js draws what an answer changed (no import of it: it imports us)
let busy = false;       // one correction at a time: each names the version the last one made
let showHeard = false;  // the header's toggle, kept while the page is redrawn

export function setRedraw(fn) { redraw = fn; }
export function heardShown() { return showHeard; }

// The interview as the page shows it (api/interviews/STEM) once a correction's `answer` is applied.
export function applied(data, answer) {
  const { at, removed, phrases } = answer.replaced;
  return { ...data, version: answer.version, duration: answer.duration, speakers: answer.speakers,
    highlights: answer.highlights, corrections: answer.corrections,
    phrases: data.phrases.slice(0, at).concat(phrases, data.phrases.slice(at + removed)) };
}

// Send one correction ({kind, ...}, see igot/outputs/corrections.py); what it changed is drawn,
// and `said` toasted. Returns the interview as the page now shows it, or null when refused (the
// error is toasted: a 409 offers to reload the page).
export async function correct(asked, said) {
  const data = state.interview;
  if (!data || busy) return null;
  busy = true;
  try {
    const answer = await api(`api/interviews/${encodeURIComponent(data.stem)}/corrections`,
      { method: "POST", body: { ...asked, version: data.version } });
    if (state.interview !== data) return null;  // the user moved on while it was saved
    if (answer.merged) {  // made over a teammate's newer change: what it replaced is of their version, so read it all
      data.version = answer.version;
      readInterviewAgain();
      if (said) toast(said);
      return data;
    }
    const next = applied(data, answer);
    redraw(next, answer.replaced);
    if (said) toast(said);
    return next;
  } catch (err) {
    if (err.status === 409) toast(err.message, "error", { label: "Reload", run: () => reload() });
    else toast(err.message, "error");
    return null;
  } finally {
    busy = false;
  }
}

// The header's tools: Undo while there is something to undo, the toggle once a phrase was corrected.
export function fixBarHtml(data) {
  const last = data.corrections && data.corrections.count ? data.corrections.last : null;
  const anyHeard = data.phrases.some((p) => p.heard !== null && p.heard !== undefined);
  if (!last && !anyHeard) return "";
  return `<p class="fix-bar">${last ? `<button type="button" class="undo" title="Undo the last correction: ${esc(UNDOES[last] || last)}">↶ Undo</button>` : ""}${
    anyHeard ? `<label class="heard-toggle"><input type="checkbox"${showHeard ? " checked" : ""}> Show what the machine heard</label>` : ""}</p>`;
}

export function wireFixBar(box) {
  const undo = box.querySelector(".fix-bar .undo");
  if (undo) undo.addEventListener("click", () => correct({ kind: "undo" }, "Undone."));
  const toggle = box.querySelector(".heard-toggle input");
  if (toggle) toggle.addEventListener("change", () => {
    showHeard = toggle.checked;
    document.getElementById("transcript").classList.toggle("show-heard", showHeard);
  });
}
