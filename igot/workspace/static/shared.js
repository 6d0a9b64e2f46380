// The Shared page (#/shared, a team's server only): every link made for people outside the team,
// what it shows, who made it, when, when it ends and how often it was opened, with Revoke (for its
// maker and admins). Never a link's key: the server keeps only its hash. Admins also set who may
// make links and can switch every link of the library off at once.
import { ago, whenHtml } from "./activity.js";
import { api } from "./api.js";
import { state } from "./state.js";
import { esc, toast, view } from "./ui.js";

const ROLES = ["viewer", "researcher", "admin"];
const STATES = { open: "open", expired: "expired", revoked: "revoked" };

export async function showShared() {
  const shown = state.shown;
  if (!state.me) {
    view.innerHTML = `<div class="page"><h1>Shared links</h1><p class="empty">Links for people outside the team are made on
      a team's server (igot serve --team).</p></div>`;
    return;
  }
  const got = await api("api/shares");
  if (shown !== state.shown) return;
  draw(got);
}

function what(s) {
  const href = s.kind === "highlight" ? `#/interview/${encodeURIComponent(s.stem)}`
    : s.kind === "reel" ? `#/tag/${encodeURIComponent(s.thing)}` : s.kind === "report" ? `#/report/${encodeURIComponent(s.thing)}` : "";
  const label = s.kind === "highlight" ? `“${s.title}”` : s.title;
  const hidden = [s.hide_names && "names hidden", s.hide_interview && "interview hidden"].filter(Boolean).join(", ");
  return `<span class="shared-kind">${esc(s.kind)}</span> ${href ? `<a href="${esc(href)}">${esc(label)}</a>` : esc(label)}${
    hidden ? ` <span class="hint">(${esc(hidden)})</span>` : ""}`;
}

function ends(s) {
  if (s.state === "revoked") return `revoked ${whenHtml(s.revoked)}`;
  if (!s.expires) return "never";
  const at = Date.parse(s.expires);
  return s.state === "expired" ? `ended ${whenHtml(s.expires)}`
    : `<time datetime="${esc(s.expires)}" title="${esc(new Date(at).toLocaleString())}">${esc(new Date(at).toLocaleDateString())}</time>`;
}

function draw(got) {
  const admin = state.me.role === "admin";
  const rows = got.shares.map((s) => `<tr class="shared-item state-${esc(s.state)}" data-id="${esc(s.id)}">
      <td class="shared-what">${what(s)}</td><td>${esc(s.by || "someone who left")}</td><td>${whenHtml(s.made)}</td>
      <td>${ends(s)}</td><td class="shared-opened">${s.opened}${s.last_opened ? ` <span class="hint">(last ${esc(ago(s.last_opened))})</span>` : ""}</td>
      <td class="shared-state">${esc(STATES[s.state] || s.state)}</td>
      <td>${s.state !== "revoked" && s.may_revoke ? `<button type="button" class="revoke">Revoke</button>` : ""}</td></tr>`).join("");
  view.innerHTML = `<div class="page shared"><h1>Shared links</h1>
    <p class="meta">Links anyone can open without an account: each shows one highlight, reel or report (its quotes, who said them,
      the interview's name and the clip) and nothing else. A link is shown once, when it is made; Revoke stops it at once.</p>
    ${got.settings.public ? "" : `<p class="stale">Public links are switched off: every link below answers as gone.</p>`}
    ${rows ? `<table class="shared-list"><thead><tr><th>What</th><th>By</th><th>Made</th><th>Ends</th><th>Opened</th><th>State</th><th></th></tr></thead>
      <tbody>${rows}</tbody></table>` : `<p class="empty">No link yet: “Share” beside a highlight, on a tag's reel or on a report makes one.</p>`}
    ${admin ? settingsHtml(got.settings) : ""}</div>`;
  view.querySelectorAll(".shared-item .revoke").forEach((b) => b.addEventListener("click", () => revoke(b)));
  if (admin) wireSettings();
}

function settingsHtml(kept) {
  return `<section class="shared-settings"><h2>Settings</h2>
    <label class="check"><input type="checkbox" name="public" ${kept.public ? "checked" : ""}> Public links on
      <span class="hint">(off: every link answers as gone at once, and none can be made)</span></label>
    <p>Who may make links: ${ROLES.map((r) => `<label class="check"><input type="checkbox" name="role" value="${r}" ${
      kept.roles.includes(r) ? "checked" : ""} ${r === "admin" ? "disabled" : ""}> ${r}s</label>`).join(" ")}</p></section>`;
}

function wireSettings() {
  const box = view.querySelector(".shared-settings");
  box.addEventListener("change", async () => {
    const roles = [...box.querySelectorAll("input[name=role]:checked")].map((i) => i.value);
    try {
      await api("api/shares/settings", { method: "PUT", body: { public: box.querySelector("input[name=public]").checked, roles } });
      toast("Sharing settings saved.");
      draw(await api("api/shares"));
    } catch (err) { toast(err.message, "error"); }
  });
}

async function revoke(button) {
  const id = button.closest(".shared-item").dataset.id;
  button.disabled = true;
  try {
    await api(`api/shares/${encodeURIComponent(id)}`, { method: "DELETE" });
    toast("Link revoked: it no longer opens.");
    draw(await api("api/shares"));
  } catch (err) { button.disabled = false; toast(err.message, "error"); }
}
