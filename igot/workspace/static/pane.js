// The quote pane of the list pages (a tag, search, Ask, themes): a ▶ on a quote, hit or citation
// plays it there, from its start to its end, in the player of its interview.
import { api, playable } from "./api.js";
import { createPlayer } from "./player.js";
import { startTicking, stopPlayer } from "./playback.js";
import { state } from "./state.js";
import { esc, toast, view } from "./ui.js";

export function quotePane() {
  return `<aside class="pane"><div class="pane-title">Press ▶ on a quote to play it here</div><div class="player-box"></div></aside>`;
}

async function playQuote(stem, start, end) {
  if (!state.pane) return;
  if (!state.interview || state.interview.stem !== stem) {
    stopPlayer();
    const data = await api(`api/interviews/${encodeURIComponent(stem)}`);
    state.interview = data;
    const box = state.pane.querySelector(".player-box");
    box.innerHTML = "";
    state.pane.querySelector(".pane-title").innerHTML = `<a href="#/interview/${encodeURIComponent(stem)}?t=${start}">${esc(data.title)}</a>`;
    state.player = await createPlayer(box, playable(data.player));
    startTicking();
  }
  state.clipEnd = end;
  state.player.seek(start);
  state.player.play();
}

// Every ▶ not yet wired plays what its [data-stem][data-start][data-end] holds.
export function wirePlayButtons() {
  view.querySelectorAll("button.play:not([data-wired])").forEach((b) => {
    b.dataset.wired = "1";
    b.addEventListener("click", () => {
      const card = b.closest("[data-stem]");
      playQuote(card.dataset.stem, Number(card.dataset.start), Number(card.dataset.end)).catch((err) => toast(err.message, "error"));
    });
  });
}
