// Links inside the workspace: every interview at a moment, highlight, tag, theme, search and
// question is an address of this page (#/...), and "Copy link" beside each copies it whole. On a
// team's server a teammate who opens it signs in first, then lands on it (signin.js keeps it
// through the sign-in: landing()). On one person's workspace (igot serve) the address is this
// computer's: it opens only while that workspace runs. Imports nothing: the sign-in page, which
// has no token, imports landing() too.

// The longest address kept through a sign-in: a search or question with its filters fits.
const LONGEST = 2000;

// Where a person goes once signed in, from the fragment they came with (`#/interview/x?t=5`): the
// workspace's page at that fragment, only ever on this origin ("/#..."), and only a workspace
// route (#/ then URL characters): anything else (another site, //host, javascript:, a control
// character) lands on the library. The server checks the same for the OpenID sign-in
// (igot.workspace.team_door.landing).
export function landing(fragment) {
  const route = String(fragment || "").replace(/^#/, "");
  return /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*$/.test(route) && route.length <= LONGEST ? `/#${route}` : "/";
}

// The whole address of `hash` (#/...) on this page: the page's own origin and path, so that under
// Colab's port proxy it keeps the proxy's path. One person's workspace needs no key in it: the
// page itself is served to anyone on this computer and gets its key from the server.
export function linkTo(hash) {
  return `${location.origin}${location.pathname}${hash}`;
}

function team() { return document.body.classList.contains("team"); }

// What the button says when hovered: who can open the link, and for how long.
function title(what) {
  return team() ? `Copy a link to ${what}: a teammate who opens it signs in, then sees exactly this`
    : `Copy a link to ${what}: it opens on this computer while this workspace runs (igot serve)`;
}

// A "Copy link" button for `hash`, as HTML for a view's template; `what` names it in its title.
// Without `hash` (data-link left out) the view copies what it computes on click, with copyLink().
export function copyLinkButton(hash, what = "this", label = "Copy link") {
  const safe = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<button type="button" class="link copy-link"${hash ? ` data-link="${safe(hash)}"` : ""} title="${safe(title(what))}">${safe(label)}</button>`;
}

// Copy the address of `hash`; where the browser does not let the page write the clipboard, the
// address is shown selected, to copy by hand. `button`: where to show it.
export async function copyLink(hash, button) {
  const address = linkTo(hash);
  button.dataset.copied = address;  // what was copied, for anyone checking (and the tests)
  try {
    await navigator.clipboard.writeText(address);
    say(button, "Link copied");
  } catch {
    showAddress(button, address);
  }
}

function say(button, text) {
  const was = button.textContent;
  button.textContent = text;
  button.classList.add("copied");
  setTimeout(() => { button.textContent = was; button.classList.remove("copied"); }, 1600);
}

function showAddress(button, address) {
  document.querySelectorAll(".popover.link-pop").forEach((p) => p.remove());
  const box = document.createElement("div");
  box.className = "popover link-pop";
  box.innerHTML = `<label>Copy this link <input readonly class="link-address"></label>`;
  const input = box.querySelector("input");
  input.value = address;
  const r = button.getBoundingClientRect();
  box.style.left = `${Math.max(8, Math.min(r.left, innerWidth - 360))}px`;
  box.style.top = `${r.bottom + 6}px`;
  document.body.appendChild(box);
  input.focus();
  input.select();
  input.addEventListener("blur", () => box.remove());
}

// Every "Copy link" with its address in data-link, in any view: listened to once for the page.
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("button.copy-link[data-link]");
  if (button) copyLink(button.dataset.link, button);
});
