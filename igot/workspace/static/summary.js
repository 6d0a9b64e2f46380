// The interview's summary beside its player: each point as the exports show it (a quote nobody
// said marked), and each time it cites a button that plays that moment. "Redo the summary" opens
// the library's prompt (igot.outputs.store: OUT/summary-prompt.txt, the default when none is
// kept), saved with the version it was read at, then the summary written again with it by the
// workspace's LLM and saved into every export; the summary is drawn again from the answer.
import { api } from "./api.js";
import { goTo, phraseAt } from "./playback.js";
import { reload, state } from "./state.js";
import { clock, esc, toast } from "./ui.js";

let writing = false;  // a summary is being written: minutes on a CPU, one at a time

export function summaryHtml(data) {
  if (!data.summary.length && !data.phrases.length) return "";
  const points = data.summary.map((p) => `<li>${p.pieces.map(([text, unverified]) => unverified
      ? `<mark class="unverified" title="Not found in the transcript: check it in the recording">${esc(text)}</mark> <span class="flag">unverified quote</span>`
      : esc(text)).join("")}${p.times.map((t) => ` <button type="button" class="cite-time" data-t="${t}" title="Play this moment">▶ ${clock(t)}</button>`).join("")}</li>`).join("");
  const redo = data.phrases.length ? `<div class="buttons summary-tools"><button type="button" class="redo-summary"${writing ? " disabled" : ""}>Redo the summary</button>
      <span class="meta summary-status" role="status">${writing ? "Writing the summary…" : ""}</span></div><div class="summary-editor" hidden></div>` : "";
  return `<details class="summary" open><summary>Summary</summary>${points ? `<ul>${points}</ul>` : `<p class="empty">No summary yet.</p>`}${
    data.summary_note ? `<p class="note">${esc(data.summary_note)}</p>` : ""}${redo}</details>`;
}

export function wireSummary(box) {
  box.addEventListener("click", (event) => {
    const button = event.target.closest(".cite-time");
    if (button) {
      const t = Number(button.dataset.t);
      goTo(phraseAt(t), t);
    } else if (event.target.closest(".redo-summary")) openEditor(box);
  });
}

// The prompt as the library keeps it, in an editor under the summary.
async function openEditor(box) {
  const editor = box.querySelector(".summary-editor");
  if (!editor || !editor.hidden) return;
  const data = state.interview;
  let kept;
  try {
    kept = await api("api/summary-prompt");
  } catch (err) {
    toast(err.message, "error");
    return;
  }
  if (state.interview !== data) return;  // the user moved on meanwhile
  editor.innerHTML = `<form class="summary-prompt" autocomplete="off">
    <label for="summary-prompt-text">The prompt the summary is written with: <code>{transcript}</code> is replaced by the
      transcript, <code>{name}</code> by the interview's name, <code>{language}</code> by its language.</label>
    <textarea id="summary-prompt-text" name="prompt" rows="14" spellcheck="false">${esc(kept.text || kept.default)}</textarea>
    ${kept.problem ? `<p class="stale">${esc(kept.problem)} Saving replaces the file.</p>` : ""}
    <p class="meta"><span class="prompt-kind">${whose(kept.text)}</span>. Kept for the library: igot run writes the
      next summaries with it too.</p>
    <p class="form-error" role="alert"></p>
    <div class="buttons"><button type="submit" class="primary">Save and redo the summary</button>
      <button type="button" class="save-prompt">Save the prompt</button>
      <button type="button" class="default-prompt">Back to the default</button>
      <button type="button" class="close-prompt">Close</button></div></form>`;
  editor.hidden = false;
  const form = editor.querySelector("form");
  let version = kept.version, saved = kept.text || kept.default;
  form.prompt.focus();
  editor.querySelector(".default-prompt").addEventListener("click", () => { form.prompt.value = kept.default; form.prompt.focus(); });
  editor.querySelector(".close-prompt").addEventListener("click", () => { editor.hidden = true; editor.innerHTML = ""; });
  // The prompt saved when it was edited; its version is the one the summary is asked with.
  const savePrompt = async () => {
    if (form.prompt.value === saved) return true;
    try {
      const now = await api("api/summary-prompt", { method: "PUT", body: { text: form.prompt.value, version } });
      version = now.version;
      saved = form.prompt.value;
      form.querySelector(".prompt-kind").textContent = whose(now.text);
      return true;
    } catch (err) {
      failed(form, err);
      return false;
    }
  };
  editor.querySelector(".save-prompt").addEventListener("click", async () => {
    form.querySelector(".form-error").textContent = "";
    if (await savePrompt()) toast("Prompt saved for the library.");
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.querySelector(".form-error").textContent = "";
    if (writing || !(await savePrompt())) return;
    redo(box, form, data, version);
  });
}

function whose(text) { return text ? "The library's own prompt" : "iGot's default prompt"; }

// The summary written again (it takes a while): the buttons off meanwhile, then drawn from the answer.
async function redo(box, form, data, promptVersion) {
  writing = true;
  const busy = (on) => {
    box.querySelectorAll(".redo-summary, .summary-prompt button").forEach((b) => { b.disabled = on; });
    const status = box.querySelector(".summary-status");
    if (status) status.textContent = on ? "Writing the summary…" : "";
  };
  busy(true);
  try {
    const answer = await api(`api/interviews/${encodeURIComponent(data.stem)}/summary`, {
      method: "POST", body: { version: data.version, prompt_version: promptVersion } });
    writing = false;
    // Later changes of this page (a highlight, a correction) name the version the summary made.
    data.version = answer.version;
    data.summary = answer.summary;
    data.summary_note = answer.summary_note;
    if (state.interview === data) box.innerHTML = summaryHtml(data);
    toast("Summary written again: every export of the interview shows it.");
  } catch (err) {
    writing = false;
    busy(false);
    failed(form, err);
  }
}

// An error said under the prompt; a change made elsewhere (409) offers to reload.
function failed(form, err) {
  const line = form.querySelector(".form-error");
  line.textContent = err.message;
  if (err.status === 409 && !form.querySelector(".reload-summary")) {
    line.insertAdjacentHTML("afterend", `<p class="stale">Changed elsewhere (another tab or window?): reload to see it. <button type="button" class="reload-summary primary">Reload</button></p>`);
    form.querySelector(".reload-summary").addEventListener("click", () => reload());
  }
}
