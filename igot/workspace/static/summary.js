// The interview's summary beside its player: each point as the exports show it (a quote nobody
// said marked), and each time it cites a button that plays that moment.
import { goTo, phraseAt } from "./playback.js";
import { clock, esc } from "./ui.js";

export function summaryHtml(data) {
  if (!data.summary.length) return "";
  const points = data.summary.map((p) => `<li>${p.pieces.map(([text, unverified]) => unverified
      ? `<mark class="unverified" title="Not found in the transcript: check it in the recording">${esc(text)}</mark> <span class="flag">unverified quote</span>`
      : esc(text)).join("")}${p.times.map((t) => ` <button type="button" class="cite-time" data-t="${t}" title="Play this moment">▶ ${clock(t)}</button>`).join("")}</li>`).join("");
  return `<details class="summary" open><summary>Summary</summary><ul>${points}</ul>${
    data.summary_note ? `<p class="note">${esc(data.summary_note)}</p>` : ""}</details>`;
}

export function wireSummary(box) {
  box.addEventListener("click", (event) => {
    const button = event.target.closest(".cite-time");
    if (!button) return;
    const t = Number(button.dataset.t);
    goTo(phraseAt(t), t);
  });
}
