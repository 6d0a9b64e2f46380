// Ask (#/ask?q=...&filters): the phrases that answer a question, then the local LLM's answer
// written from them alone, every quote it makes checked against the transcripts.
import { allowHere, api, asked, go } from "./api.js";
import { copyLinkButton } from "./links.js";
import { quotePane, wirePlayButtons } from "./pane.js";
import { filterPicks, hitItem, questionPage, wireHits } from "./question.js";
import { reload, state } from "./state.js";
import { clock, esc, speakerClass, view } from "./ui.js";

export async function showAsk(params) {
  const shown = state.shown;
  const { lib, q, query } = await questionPage(params, ["q", "interview", "speaker", "tag"]);
  if (shown !== state.shown) return;
  view.innerHTML = `<div class="page with-pane"><div class="main-col"><h1>Ask your interviews ${q ? copyLinkButton(`#/ask?${query}`, "this question (asked again when opened and Ask is pressed)") : ""}</h1>
    <form class="ask-form" id="ask-form" autocomplete="off">
      <textarea name="q" rows="2" maxlength="1000" placeholder="e.g. What did people say about pricing?" aria-label="Your question">${esc(q)}</textarea>
      <div class="filters">${filterPicks(lib, params, ["interview", "speaker", "tag"])}
      <button type="submit" class="primary">Ask</button></div>
    </form>
    <div id="ask-result">${q ? "" : `<p class="status">Ask a question in any language: the phrases that answer it come from every interview, then an answer written from them alone, each quote checked.</p>`}</div>
    </div>${quotePane()}</div>`;
  state.pane = view.querySelector(".pane");
  const form = view.querySelector("#ask-form");
  const ask = () => {
    const next = new URLSearchParams();
    next.set("q", form.q.value.trim());
    form.querySelectorAll("select").forEach((s) => { if (s.value) next.set(s.name, s.value); });
    if (!form.q.value.trim()) return;
    if (`#/ask?${next}` === location.hash) { allowHere(); reload(); } else go(`#/ask?${next}`);
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); ask(); });
  form.q.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); ask(); } });
  if (!q) { form.q.focus(); return; }
  const result = view.querySelector("#ask-result");
  if (!asked()) {  // opened by a link: the question waits for the user's Ask
    result.innerHTML = `<p class="status">Press <b>Ask</b> to ask this question of your interviews.</p>`;
    return;
  }
  result.innerHTML = `<p class="status" aria-live="polite"><span class="spinner"></span>Finding the phrases that answer it…</p>`;
  const found = await api(`api/ask?${query}`);
  if (shown !== state.shown) return;
  result.innerHTML = `<section class="answer" id="answer" aria-live="polite">${found.llm
    ? `<p class="status waiting"><span class="spinner"></span>Writing the answer from these phrases with the local LLM… <span class="elapsed"></span></p>`
    : `<p class="status no-llm">${esc(found.llm_line || "No written answer: the phrases alone.")}</p>`}</section>
    ${found.line ? `<p class="meaning-line">${esc(found.line)}</p>` : ""}
    <section class="phrases"><h2>Phrases that answer it <span class="count">${found.phrases.length}</span></h2>
    ${found.phrases.length ? `<ol class="hits">${found.phrases.map((h, i) => hitItem(h, i + 1)).join("")}</ol>`
      : `<p class="empty">No phrase answers it${query.has("tag") || query.has("interview") || query.has("speaker") ? " with these filters" : ""}.</p>`}</section>`;
  wireHits(result);
  if (!found.llm) return;
  // The answer takes a while: say how long it has been, until it comes or the user moves on.
  const began = Date.now();
  const tick = setInterval(() => {
    const el = result.querySelector(".elapsed");
    if (el && shown === state.shown) el.textContent = `${Math.round((Date.now() - began) / 1000)} s (a small model on a laptop takes up to a minute)`;
    else clearInterval(tick);
  }, 1000);
  let answer;
  try { answer = await api(`api/ask/answer?${query}`); } finally { clearInterval(tick); }
  if (shown !== state.shown) return;
  result.querySelector("#answer").innerHTML = answerHtml(answer);
  wirePlayButtons();
}

// The answer's points, each with the moments it cites (playable) and any quote not found.
function answerHtml(a) {
  if (!a.points.length) return `<p class="status no-llm">${esc(a.line || "The LLM wrote no answer: the phrases below are what the interviews say.")}</p>`;
  const points = a.points.map((p) => `<li class="point">
    <p>${esc(p.text)}</p>
    <div class="cites">${p.citations.map((c) => `<span class="cite ${speakerClass(c.colour)}" data-stem="${esc(c.stem)}" data-start="${c.time}" data-end="${c.time + 8}">
      <button type="button" class="play" title="${esc(c.text)}">▶ ${clock(c.time)}</button>
      <a href="#/interview/${encodeURIComponent(c.stem)}?t=${c.time}">${esc(c.interview)}</a>${c.speaker ? ` · <span class="who">${esc(c.speaker)}</span>` : ""}</span>`).join("")}
    ${p.citations.length ? "" : `<span class="unbacked">cites no phrase: not backed by the interviews</span>`}</div>
    ${p.unverified.map((u) => `<p class="unverified" title="Looked up in every transcript: not found">“${esc(u)}”: not said in these interviews</p>`).join("")}
    </li>`).join("");
  return `<h2>Answer <span class="count">written by ${esc(a.model || "the local LLM")} from the phrases below only; every moment checked</span></h2><ul class="points">${points}</ul>`;
}
