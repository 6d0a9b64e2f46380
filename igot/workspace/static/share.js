// "Share" beside a highlight and on a tag's reel: a link anyone can open without an account (a
// team's server only: igot serve --team). The dialog asks what to hide and when the link ends, then
// shows the link once, with Copy: the server keeps only its hash, so it is never shown again (the
// Shared page, shared.js, lists the links without it and revokes them).
import { api } from "./api.js";
import { state } from "./state.js";
import { closePopover, esc, place, toast } from "./ui.js";

// The button a view draws; `what`: {kind: "highlight", stem, highlight, quote} or {kind: "reel", tag}.
// `look`: "link" (a line's small action) or "button".
export function shareButton(what, label = "Share", look = "link") {
  const data = Object.entries(what).map(([k, v]) => `data-${k}="${esc(v)}"`).join(" ");
  return `<button type="button" class="${look} share-open" ${data} title="A link anyone can open, without an account">${esc(label)}</button>`;
}

document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest(".share-open");
  if (button) openShare(button, { ...button.dataset });
});

async function openShare(button, what) {
  closePopover();
  const box = document.createElement("div");
  box.className = "popover form-pop share-pop";
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-label", "Share outside the team");
  const close = `<div class="buttons"><button type="button" class="cancel">Close</button></div>`;
  if (!state.me) {  // one person's workspace, on this computer only
    box.innerHTML = `<p class="share-needs">A link for people outside the team needs the team server
      (<code>igot serve --team</code>): this workspace answers only this computer.</p>${close}`;
  } else {
    let kept;
    try { kept = await api("api/shares/settings"); } catch (err) { toast(err.message, "error"); return; }
    if (!kept.public) {
      box.innerHTML = `<p class="share-needs">Public links are switched off for this library: an admin can switch them on in
        <a href="#/shared">Shared</a>.</p>${close}`;
    } else if (!kept.may_share) {
      box.innerHTML = `<p class="share-needs">A ${esc(state.me.role)} may not make links for people outside the team:
        an admin can allow it in <a href="#/shared">Shared</a>.</p>${close}`;
    } else {
      box.innerHTML = formHtml(what);
      wireForm(box, what);
    }
  }
  box.querySelectorAll(".cancel").forEach((b) => b.addEventListener("click", () => closePopover()));
  box.querySelectorAll("a").forEach((a) => a.addEventListener("click", () => closePopover()));
  place(box, button.getBoundingClientRect());
  (box.querySelector("input, button.primary, button.cancel") || box).focus();
}

function formHtml(what) {
  const thing = what.kind === "reel" ? `the reel of every highlight tagged “${esc(what.tag)}”`
    : what.kind === "report" ? `the report “${esc(what.title || "")}” as last saved: its findings and their quotes`
    : `“${esc(String(what.quote || "").slice(0, 140))}${String(what.quote || "").length > 140 ? "…" : ""}”`;
  const many = what.kind !== "highlight";
  return `<form class="share-form" autocomplete="off">
    <h3>Share with anyone who has the link</h3>
    <p class="share-what">${thing}</p>
    <label class="check"><input type="checkbox" name="hide_names"> Hide names (speakers shown as “Participant”)</label>
    <label class="check"><input type="checkbox" name="hide_interview"> Hide the interview's name</label>
    <label>Link ends <select name="days"><option value="">never</option><option value="1">in 1 day</option>
      <option value="7">in 7 days</option><option value="30">in 30 days</option></select></label>
    <p class="hint">Whoever opens it sees ${what.kind === "report" ? "the title, the findings, " : ""}the quote${many ? "s" : ""},
      who said ${many ? "them" : "it"}, the interview's name and the clip${many ? "s" : ""}: nothing else of the library. Revoke it any time in <a href="#/shared">Shared</a>.</p>
    <p class="form-error" role="alert"></p>
    <div class="buttons"><button type="submit" class="primary">Make link</button><button type="button" class="cancel">Cancel</button></div>
  </form>`;
}

function wireForm(box, what) {
  const form = box.querySelector("form"), error = box.querySelector(".form-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const days = form.elements.days.value;
    const body = { kind: what.kind, hide_names: form.elements.hide_names.checked,
      hide_interview: form.elements.hide_interview.checked, days: days ? Number(days) : null };
    if (what.kind === "highlight") Object.assign(body, { stem: what.stem, highlight: what.highlight });
    else if (what.kind === "reel") body.tag = what.tag;
    else body[what.kind] = what[what.kind];
    let made;
    try {
      made = await api("api/shares", { method: "POST", body });
    } catch (err) { error.textContent = err.message; return; }
    showOnce(box, made.link);
  });
}

// The link, this once: selected, with Copy.
function showOnce(box, link) {
  box.innerHTML = `<div class="share-made"><h3>Link made</h3>
    <p class="share-once">This is the only time the link is shown: copy it now.</p>
    <div class="share-row"><input class="share-link" readonly value="${esc(link)}" aria-label="The link">
    <button type="button" class="primary share-copy">Copy</button></div>
    <p class="hint">Anyone with it can open it, without an account. Revoke it in <a href="#/shared">Shared</a>.</p>
    <div class="buttons"><button type="button" class="cancel">Done</button></div></div>`;
  const input = box.querySelector(".share-link");
  box.querySelector(".share-copy").addEventListener("click", () => copy(input));
  box.querySelector(".cancel").addEventListener("click", () => closePopover());
  box.querySelector("a").addEventListener("click", () => closePopover());
  input.focus();
  input.select();
}

async function copy(input) {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    toast("Link copied.");
  } catch {
    toast(document.execCommand && document.execCommand("copy") ? "Link copied." : "Press Ctrl+C (⌘C) to copy the selected link.");
  }
}
