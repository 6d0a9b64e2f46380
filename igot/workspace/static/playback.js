// The one player of the page (an interview's, or a list page's quote pane) and the clock that
// follows it: the phrase being said is marked and kept in view; a quote played from a list
// stops at its end.
import { state } from "./state.js";

export function stopPlayer() {
  clearInterval(state.timer);
  state.timer = null;
  state.player = null;
  state.interview = null;
  state.now = -1;
  state.clipEnd = null;
}

// The phrase said at `t` seconds (a binary search over the phrases in time order).
export function phraseAt(t) {
  const order = state.order, phrases = state.interview.phrases;
  if (!order || !order.length) return -1;
  let lo = 0, hi = order.length - 1, k = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (phrases[order[mid]].start <= t + 1e-3) { k = mid; lo = mid + 1; } else hi = mid - 1;
  }
  if (k < 0) return order[0];
  for (let j = k; j >= Math.max(0, k - 8); j--) {  // a long phrase a back-channel interrupted
    const p = phrases[order[j]];
    if (p.start <= t && t < p.end && p.text) return order[j];
  }
  return order[k];
}

export function mark(i, scroll) {
  if (i === state.now || !state.phraseEls) return;
  if (state.now >= 0 && state.phraseEls[state.now]) state.phraseEls[state.now].classList.remove("now");
  state.now = i;
  const el = state.phraseEls[i];
  if (!el) return;
  el.classList.add("now");
  if (scroll) {
    const r = el.getBoundingClientRect();
    if (r.top < innerHeight * 0.15 || r.bottom > innerHeight * 0.85) el.scrollIntoView({ block: "center", behavior: "smooth" });
  }
}

// Play from phrase i (from its start, or from `t`).
export function goTo(i, t) {
  if (i < 0 || !state.player) return;
  const at = t === undefined ? state.interview.phrases[i].start : t;
  state.player.seek(at);
  state.clipEnd = null;
  mark(i, true);
}

export function startTicking() {
  clearInterval(state.timer);
  state.timer = setInterval(() => {
    const player = state.player;
    if (!player) return;
    const t = player.time();
    if (state.clipEnd !== null && t >= state.clipEnd && !player.paused()) { player.pause(); state.clipEnd = null; }
    if (state.phraseEls && !player.paused()) mark(phraseAt(t), true);
  }, 100);
}
