// Search (#/search?q=...&filters): every interview, by words and by meaning together. The box in
// the page's header starts one.
import { allowHere, api, asked, go } from "./api.js";
import { copyLinkButton } from "./links.js";
import { quotePane } from "./pane.js";
import { filterPicks, hitItem, questionPage, wireHits } from "./question.js";
import { reload, state } from "./state.js";
import { esc, plural, view } from "./ui.js";

export async function showSearch(params) {
  const shown = state.shown;
  const { lib, q, query } = await questionPage(params, ["q", "interview", "speaker", "language", "tag"]);
  if (shown !== state.shown) return;
  document.getElementById("q").value = q;
  view.innerHTML = `<div class="page with-pane"><div class="main-col"><h1>Search ${q ? copyLinkButton(`#/search?${query}`, "this search (it runs once opened and asked)") : ""}</h1>
    <form class="filters" id="filters">${filterPicks(lib, params, ["interview", "speaker", "language", "tag"])}</form>
    <p class="status" aria-live="polite">${q ? `<span class="spinner"></span>Searching every interview by words and by meaning…` : "Type words to find in every interview, or what someone meant."}</p>
    <p class="meaning-line" hidden></p>
    <ol class="hits"></ol></div>${quotePane()}</div>`;
  state.pane = view.querySelector(".pane");
  view.querySelector("#filters").addEventListener("change", (e) => {
    const next = new URLSearchParams(query);
    if (e.target.value) next.set(e.target.name, e.target.value); else next.delete(e.target.name);
    go(`#/search?${next}`);
  });
  if (!q) return;
  if (!asked()) {  // opened by a link: the user says whether to search
    view.querySelector(".status").innerHTML = `<button type="button" class="primary run">Search for “${esc(q)}”</button>`;
    view.querySelector(".run").addEventListener("click", () => { allowHere(); reload(); });
    return;
  }
  const found = await api(`api/search?${query}`);
  if (shown !== state.shown) return;
  const meaningLine = view.querySelector(".meaning-line");
  if (found.line) { meaningLine.textContent = found.line; meaningLine.hidden = false; }
  const byMeaning = found.hits.filter((h) => h.how !== "words").length;
  view.querySelector(".status").textContent = `${plural(found.count, "phrase")} found${
    found.meaning ? ` (${byMeaning} by meaning)` : ""}${found.count > found.hits.length ? `, the first ${found.hits.length} shown` : ""}.`;
  view.querySelector(".hits").innerHTML = found.hits.map((h) => hitItem(h)).join("");
  wireHits(view);
}

// The header's search box, listened to once for the whole page.
export function listenToSearchBox() {
  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const q = document.getElementById("q").value.trim();
    if (q) go(`#/search?q=${encodeURIComponent(q)}`); else location.hash = "#/";
  });
}
