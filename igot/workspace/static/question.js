// What Search and Ask share: the page's start (the library, for its colours, its tags to suggest
// and the filters), the filter menus, and the phrases found, each playable and highlightable.
import { api } from "./api.js";
import { openHighlightForm } from "./highlights.js";
import { wirePlayButtons } from "./pane.js";
import { state } from "./state.js";
import { clock, esc, setColours, speakerClass, toast } from "./ui.js";

// The library, the question (q) and the filters among `keys` that are passed on to the server.
export async function questionPage(params, keys) {
  const lib = await api("api/library");
  setColours(lib);
  state.tags = lib.tags.map((t) => t.tag);
  const query = new URLSearchParams();
  keys.forEach((k) => { if (params.get(k)) query.set(k, params.get(k)); });
  return { lib, q: params.get("q") || "", query };
}

// One menu per name in `names`, each showing what the address chose.
export function filterPicks(lib, params, names) {
  const pick = (name, values, label) => `<label>${label} <select name="${name}"><option value="">any</option>${
    values.map(([v, text]) => `<option value="${esc(v)}"${params.get(name) === v ? " selected" : ""}>${esc(text)}</option>`).join("")}</select></label>`;
  const all = {
    interview: () => pick("interview", lib.interviews.map((i) => [i.stem, i.name]), "Interview"),
    speaker: () => pick("speaker", lib.people.map((p) => [p, p]), "Speaker"),
    language: () => pick("language", lib.languages.map((l) => [l, l]), "Language"),
    tag: () => pick("tag", lib.tags.map((t) => [t.tag, t.tag]), "Tag"),
  };
  return names.map((n) => all[n]()).join("");
}

const HOW = { meaning: "by meaning", both: "words + meaning" };  // a hit found by words alone says nothing

// A phrase found, numbered `n` (Ask) or not (search), its matched words marked.
export function hitItem(h, n) {
  return `<li class="hit ${speakerClass(h.colour)}" data-stem="${esc(h.stem)}" data-start="${h.start}" data-end="${h.end}" data-phrase="${h.phrase}">
    <div class="hit-head">${n ? `<span class="num">${n}</span>` : ""}<a href="#/interview/${encodeURIComponent(h.stem)}?t=${h.start}">${esc(h.interview)}</a>
    ${h.speaker ? `<span class="who">${esc(h.speaker)}</span>` : ""}
    <button type="button" class="play">▶ ${clock(h.start)}</button>
    ${HOW[h.how] ? `<span class="how ${esc(h.how)}" title="How this phrase was found">${HOW[h.how]}</span>` : ""}
    <button type="button" class="link highlight-hit">Highlight</button></div>
    <p class="text">${marked(h.text, h.marks || [])}</p></li>`;
}

// `text` made safe for HTML, with its [start, end) character spans in <mark>.
function marked(text, marks) {
  let out = "", pos = 0;
  for (const [a, b] of marks) { out += esc(text.slice(pos, a)) + `<mark>${esc(text.slice(a, b))}</mark>`; pos = b; }
  return out + esc(text.slice(pos));
}

// A hit's Highlight opens the form on its whole phrase, on the interview's current version.
export function wireHits(root) {
  wirePlayButtons();
  root.querySelectorAll("button.highlight-hit").forEach((b) => b.addEventListener("click", async () => {
    const li = b.closest(".hit");
    try {
      const data = await api(`api/interviews/${encodeURIComponent(li.dataset.stem)}`);
      const p = data.phrases[Number(li.dataset.phrase)];
      openHighlightForm(b.getBoundingClientRect(), { stem: data.stem, version: data.version, start: p.start, end: p.end, quote: p.text },
        () => toast("Highlight saved."));
    } catch (err) { toast(err.message, "error"); }
  }));
}
