// Small helpers every view uses: text made safe for HTML, times, counts, the toast, the speakers'
// colours, and popovers placed next to what opened them.
import { state } from "./state.js";

export const view = document.getElementById("view");  // where each page is drawn
const toastBox = document.getElementById("toast");

export function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

export function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds || 0));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(r).padStart(2, "0")}` : `${m}:${String(r).padStart(2, "0")}`;
}

export function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

let toastTimer = null;
// `action` ({label, run}): a button in the toast (e.g. "Reload" when the interview changed elsewhere).
export function toast(message, kind = "info", action = null) {
  toastBox.textContent = message;
  if (action) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = action.label;
    b.addEventListener("click", () => { toastBox.className = ""; action.run(); });
    toastBox.append(" ", b);
  }
  toastBox.className = `show ${kind}${action ? " act" : ""}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toastBox.className = ""; }, action ? 15000 : kind === "error" ? 9000 : 3500);
}

// The exports' speaker colours and border styles (igot.outputs.export.PALETTE), as CSS variables.
export function setColours(data) {
  const root = document.documentElement.style;
  data.palette.forEach((c, i) => root.setProperty(`--c${i}`, c));
  data.borders.forEach((b, i) => root.setProperty(`--b${i}`, b));
  state.colours = data.palette.length;
  state.borders = data.borders.length;
}

export function speakerClass(i) { return `s${i % (state.colours || 8)} b${i % (state.borders || 4)}`; }

// Put a popover in the page next to `rect`: below it if it fits, else above, never off screen.
export function place(el, rect) {
  document.body.appendChild(el);
  const w = el.offsetWidth, h = el.offsetHeight;
  const left = Math.min(Math.max(8, rect.left + rect.width / 2 - w / 2), innerWidth - w - 8);
  const below = rect.bottom + 8 + h < innerHeight;
  el.style.left = `${left}px`;
  el.style.top = `${below ? rect.bottom + 8 : Math.max(8, rect.top - h - 8)}px`;
}

// offersOnly: take away the offers beside a selection ("Highlight", "Give to…") but keep an open form.
export function closePopover(offersOnly) {
  document.querySelectorAll(offersOnly ? ".popover.offer, .popover.offer-more" : ".popover").forEach((p) => p.remove());
}
