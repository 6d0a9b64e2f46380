// The library's glossary (#/glossary): names, products and jargon as the researcher spells them
// (igot.asr.glossary). Terms are added and taken away here, then saved together with the version
// they were read at: a glossary changed meanwhile (another tab, igot run --glossary) is not
// overwritten, the page offers to reload it.
import { api } from "./api.js";
import { reload, state } from "./state.js";
import { esc, plural, toast, view } from "./ui.js";

export async function showGlossary() {
  const shown = state.shown;
  const kept = await api("api/glossary");
  if (shown !== state.shown) return;
  draw({ terms: kept.terms.slice(), version: kept.version, problem: kept.problem, given: kept.given, saved: kept.terms.slice() });
}

// `g`: the terms shown (edited here), the version they were read at, and the terms as saved.
function draw(g) {
  const changed = g.terms.length !== g.saved.length || g.terms.some((t, i) => t !== g.saved[i]);
  const short = !changed && g.given < g.terms.length
    ? `<p class="meta">Whisper is given the first ${plural(g.given, "term")} (its prompt is short); Review checks every one.</p>` : "";
  view.innerHTML = `<div class="page"><section class="glossary"><h1>Glossary <span class="count">${g.terms.length}</span></h1>
    <p class="meta">Names, products and jargon, as you spell them. Given to Whisper on the next runs (igot run), so these
    words are written as you spell them; words that sound close to them are brought to you in Review.</p>${short}
    ${g.problem ? `<p class="stale">${esc(g.problem)} Saving replaces the file.</p>` : ""}
    <div class="chips terms" aria-label="Glossary terms">${g.terms.length ? g.terms.map((t, i) => `<span class="chip" data-i="${i}">${esc(t)}<button type="button" class="remove" aria-label="Remove ${esc(t)}" title="Remove">×</button></span>`).join("")
      : `<span class="empty">No terms yet.</span>`}</div>
    <form class="buttons rename-form add-terms" autocomplete="off"><input name="terms" size="50" placeholder="Add terms, with commas between: Pix, Nubank, Ana" aria-label="Terms to add">
      <button type="submit">Add</button></form>
    <p class="form-error" role="alert"></p>
    <div class="buttons"><button type="button" class="primary save"${changed ? "" : " disabled"}>Save</button>
      <span class="meta unsaved">${changed ? "Not saved yet." : ""}</span></div>
  </section></div>`;
  const form = view.querySelector(".add-terms");
  form.terms.focus();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const have = new Set(g.terms.map((t) => t.toLowerCase()));
    for (const term of form.terms.value.split(/[,\n，、]/).map((t) => t.trim().replace(/\s+/g, " ")).filter(Boolean)) {
      if (!have.has(term.toLowerCase())) { g.terms.push(term); have.add(term.toLowerCase()); }
    }
    draw(g);
  });
  view.querySelectorAll(".terms .remove").forEach((b) => b.addEventListener("click", () => {
    g.terms.splice(Number(b.closest("[data-i]").dataset.i), 1);
    draw(g);
  }));
  view.querySelector(".save").addEventListener("click", () => save(g));
}

async function save(g) {
  try {
    const kept = await api("api/glossary", { method: "PUT", body: { terms: g.terms, version: g.version } });
    draw({ terms: kept.terms.slice(), version: kept.version, problem: kept.problem, given: kept.given, saved: kept.terms.slice() });
    toast(`Glossary saved: ${plural(kept.terms.length, "term")}.`);
  } catch (err) {
    view.querySelector(".form-error").textContent = err.message;
    if (err.status === 409 && !document.getElementById("reload-glossary")) {
      view.querySelector(".form-error").insertAdjacentHTML("afterend", `<p class="stale">The glossary changed in another tab or by a run: your changes here are not saved. <button type="button" id="reload-glossary" class="primary">Reload</button></p>`);
      document.getElementById("reload-glossary").addEventListener("click", () => reload());
    }
  }
}
