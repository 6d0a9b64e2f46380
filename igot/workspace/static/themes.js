// Themes (#/themes?tag=...): the highlights grouped by meaning on a board; a highlight moved to
// another theme (dragged, or by its "Move to") is kept there.
import { api } from "./api.js";
import { quotePane, wirePlayButtons } from "./pane.js";
import { makeReport } from "./report.js";
import { reload, state } from "./state.js";
import { clock, esc, plural, setColours, speakerClass, toast, view } from "./ui.js";

export async function showThemes(params) {
  const shown = state.shown;
  const tag = params.get("tag") || "";
  const lib = await api("api/library");
  if (shown !== state.shown) return;
  setColours(lib);
  view.innerHTML = `<div class="page with-pane wide"><div class="main-col"><h1>Themes</h1>
    <form class="filters" id="theme-filter"><label>Highlights <select name="tag"><option value="">all of them</option>${
      lib.tags.map((t) => `<option value="${esc(t.tag)}"${t.tag === tag ? " selected" : ""}>tagged ${esc(t.tag)}</option>`).join("")}</select></label></form>
    <p class="status" aria-live="polite"><span class="spinner"></span>Grouping the highlights by meaning…</p>
    <p class="tools"><button type="button" class="button make-report" disabled title="Tick one or more themes first">Make a report from the ticked themes</button></p>
    <div class="board-themes" id="themes"></div></div>${quotePane()}</div>`;
  state.pane = view.querySelector(".pane");
  view.querySelector(".make-report").addEventListener("click", () => {
    const ticked = [...view.querySelectorAll(".theme .for-report:checked")].map((box) => state.board.themes.find((t) => t.id === box.value)).filter(Boolean);
    if (ticked.length) makeReport(ticked.map((t) => t.name).join(" · "), ticked.map(sourceOf)).catch((err) => toast(err.message, "error"));
  });
  view.querySelector("#theme-filter").addEventListener("change", (e) => {
    location.hash = e.target.value ? `#/themes?tag=${encodeURIComponent(e.target.value)}` : "#/themes";
  });
  const board = await api(`api/themes?tag=${encodeURIComponent(tag)}`);
  if (shown !== state.shown) return;
  drawThemes(board);
}

function drawThemes(board) {
  state.board = board;
  const count = board.themes.reduce((n, t) => n + t.cards.length, 0);
  view.querySelector(".status").innerHTML = count
    ? `${plural(count, "highlight")} in ${plural(board.themes.length, "theme")}${board.by_meaning ? ", grouped by meaning" : ""}. Drag a quote to another theme (or use its “Move to”): it stays there.${
      board.line ? `<br><span class="meaning-line">${esc(board.line)}</span>` : ""}`
    : `No highlights${board.tag ? ` tagged ${esc(board.tag)}` : ""} yet. Open an interview, select words in its transcript and highlight them.`;
  const options = (here) => board.themes.filter((t) => t.id !== here).map((t) => `<option value="${esc(t.id)}">${esc(t.name)}</option>`).join("");
  view.querySelector("#themes").innerHTML = board.themes.map((t) => `
    <section class="theme" data-theme="${esc(t.id)}"><h2><label><input type="checkbox" class="for-report" value="${esc(t.id)}" aria-label="Use “${esc(t.name)}” in a report"> ${esc(t.name)}</label></h2>
    <p class="backing"><span class="n-quotes">${plural(t.cards.length, "quote")}</span> · <span class="n-interviews">${plural(t.interviews, "interview")}</span> · <span class="n-people">${plural(t.people, "person").replace("persons", "people")}</span></p>
    ${t.cards.map((c) => `<figure class="quote card ${speakerClass(c.colour)}" data-key="${esc(c.key)}" data-stem="${esc(c.stem)}" data-start="${c.start}" data-end="${c.end}">
      <blockquote>${esc(c.quote)}</blockquote>
      <figcaption><button type="button" class="play" title="Play this quote">▶ ${clock(c.start)}</button>
      ${c.speaker ? `<span class="who">${esc(c.speaker)}</span>` : ""}
      <a href="#/interview/${encodeURIComponent(c.stem)}?t=${c.start}">${esc(c.interview)}</a>
      ${c.tags.map((x) => `<a class="tag" href="#/tag/${encodeURIComponent(x)}">${esc(x)}</a>`).join("")}</figcaption>
      <label class="move">Move to <select aria-label="Move this highlight to another theme"><option value="">…</option>${options(t.id)}<option value="new">a new theme</option></select></label>
    </figure>`).join("")}</section>`).join("");
  view.querySelectorAll(".theme .move select").forEach((select) => select.addEventListener("change", () => {
    if (select.value) moveCard(select.closest("[data-key]").dataset.key, select.value, select);
  }));
  const make = view.querySelector(".make-report");
  const ticking = () => { make.disabled = !view.querySelector(".theme .for-report:checked"); };
  view.querySelectorAll(".theme .for-report").forEach((box) => box.addEventListener("change", ticking));
  ticking();
  wireDragging();
  wirePlayButtons();
}

// A theme as a report's source: the tag it stands for (a board grouped by tag; its highlights are
// then those with the tag when the report is read), else its highlights as the board shows them.
function sourceOf(t) {
  const tag = t.tag && t.cards.every((c) => c.tags.some((x) => x.toLowerCase() === t.tag.toLowerCase()));
  return tag ? { kind: "tag", name: t.tag } : { kind: "theme", name: t.name, highlights: t.cards.map((c) => c.key) };
}

// Or drag a quote onto another theme.
function wireDragging() {
  view.querySelectorAll(".theme .card").forEach((card) => {
    card.draggable = true;
    card.addEventListener("dragstart", (e) => {
      e.dataTransfer.setData("text/plain", card.dataset.key);
      e.dataTransfer.effectAllowed = "move";
      card.classList.add("dragging");
    });
    card.addEventListener("dragend", () => card.classList.remove("dragging"));
  });
  view.querySelectorAll(".theme").forEach((theme) => {
    theme.addEventListener("dragover", (e) => { e.preventDefault(); theme.classList.add("drop"); });
    theme.addEventListener("dragleave", (e) => { if (!theme.contains(e.relatedTarget)) theme.classList.remove("drop"); });
    theme.addEventListener("drop", (e) => {
      e.preventDefault();
      theme.classList.remove("drop");
      const key = e.dataTransfer.getData("text/plain");
      const from = state.board.themes.find((t) => t.cards.some((c) => c.key === key));
      if (from && from.id !== theme.dataset.theme) moveCard(key, theme.dataset.theme);
    });
  });
}

// The move names the board's version: one made on a stale board is refused (409).
async function moveCard(key, to, select) {
  try {
    const next = await api("api/themes/move", { method: "POST", body: { version: state.board.version, tag: state.board.tag, highlight: key, to } });
    drawThemes(next);
    toast("Highlight moved.");
  } catch (err) {
    if (select) select.value = "";
    toast(err.message, "error");
    if (err.status === 409 && !document.getElementById("reload-themes")) {
      view.querySelector(".status").insertAdjacentHTML("afterend", `<p class="stale">The themes changed in another tab or an interview. <button type="button" id="reload-themes" class="primary">Reload</button></p>`);
      document.getElementById("reload-themes").addEventListener("click", () => reload());
    }
  }
}
