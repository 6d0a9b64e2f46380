// Highlighting with the mouse or keyboard: a selection of words in the transcript (inside one
// phrase or across several) becomes a time span, offered as a "Highlight" button beside it; words
// inside one phrase may also be given to another speaker or split from it (phrasefix.js).
import { applyChange, openHighlightForm } from "./highlights.js";
import { offerFixes } from "./phrasefix.js";
import { state } from "./state.js";
import { closePopover, place, toast } from "./ui.js";

function selectedSpan() {
  const sel = window.getSelection();
  if (!sel.rangeCount || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const transcript = document.getElementById("transcript");
  if (!transcript || !transcript.contains(range.commonAncestorContainer)) return null;
  const data = state.interview;
  let start = Infinity, end = -Infinity;
  const quote = [], inside = [];  // inside: {i, first, last} of each phrase with words selected
  state.phraseEls.forEach((el, i) => {
    if (!range.intersectsNode(el)) return;
    const p = data.phrases[i], words = [], ks = [];
    el.querySelectorAll(".w").forEach((w) => {
      if (!range.intersectsNode(w)) return;
      // A word whose selected part is only its edge (a selection ending just past a space) is left out.
      const part = range.cloneRange();
      part.selectNodeContents(w);
      if (range.compareBoundaryPoints(Range.START_TO_END, part) <= 0 || range.compareBoundaryPoints(Range.END_TO_START, part) >= 0) return;
      words.push(p.words[Number(w.dataset.w)]);
      ks.push(Number(w.dataset.w));
    });
    if (!words.length) return;
    inside.push({ i, first: ks[0], last: ks[ks.length - 1] });
    start = Math.min(start, words[0][2]);
    end = Math.max(end, words[words.length - 1][3]);
    quote.push(p.text.slice(words[0][0], words[words.length - 1][1]));
  });
  if (!quote.length) return null;
  return { start, end, quote: quote.join(" "), rect: range.getBoundingClientRect(), one: inside.length === 1 ? inside[0] : null };
}

// After each mouse or Shift+key selection in the transcript: offer to highlight what is selected.
export function offerHighlight() {
  closePopover(true);
  if (document.querySelector("#transcript .editor")) return;  // words being corrected: no offers
  const span = selectedSpan();
  if (!span) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "popover offer primary";
  button.textContent = "Highlight";
  place(button, span.rect);
  button.addEventListener("mousedown", (e) => e.preventDefault());  // keep the selection
  if (span.one) offerFixes(span.one, button);
  button.addEventListener("click", () => {
    const data = state.interview;
    openHighlightForm(span.rect, { stem: data.stem, version: data.version, start: span.start, end: span.end, quote: span.quote }, (done) => {
      applyChange(done);
      window.getSelection().removeAllRanges();
      toast("Highlight saved.");
    });
  });
}
