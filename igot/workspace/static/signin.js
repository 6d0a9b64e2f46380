// The team server's sign-in page (/signin) and invite page (/invite/TOKEN): no session yet, so no
// token either: the server takes these two forms only from this page's own origin. A teammate's
// link (/#/interview/x?t=5) that was sent here keeps its #fragment: once signed in, the person lands
// on it (links.js landing(): this server's page only), by password or through the company's
// identity provider (which loses a #fragment: it goes as ?next=, checked again by the server).
import { landing } from "./links.js";

const form = document.getElementById("signin-form");
const problem = form.querySelector(".form-error");
const invite = location.pathname.startsWith("/invite/") ? decodeURIComponent(location.pathname.slice("/invite/".length)) : "";

async function send(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body), credentials: "same-origin" });
  const data = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(data.error || `The server answered ${response.status}.`);
  return data;
}

async function setUp() {
  const how = await fetch("/api/signin").then((r) => r.json()).catch(() => ({}));
  if (how.oidc) document.getElementById("oidc").hidden = false;
  const going = landing(location.hash);
  if (going !== "/") document.getElementById("oidc-link").href = `/signin/oidc?next=${encodeURIComponent(going.slice(2))}`;
  const refused = new URLSearchParams(location.search).get("refused");
  if (refused) problem.textContent = refused;
  if (!invite) return;
  document.getElementById("title").textContent = "Join your team";
  document.getElementById("name-row").hidden = false;
  document.getElementById("password-hint").hidden = false;
  document.getElementById("go").textContent = "Join";
  form.password.autocomplete = "new-password";
  form.email.readOnly = true;
  try {
    const found = await fetch(`/api/invites/${encodeURIComponent(invite)}`).then(async (r) => {
      const data = await r.json();
      if (!r.ok) throw new Error(data.error);
      return data;
    });
    form.email.value = found.email;
    document.getElementById("lead").textContent = `You are invited as ${found.role}. Choose your name and a password.`;
  } catch (err) {
    document.getElementById("lead").textContent = err.message;
    form.hidden = true;
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  problem.textContent = "";
  const button = document.getElementById("go");
  button.disabled = true;
  try {
    if (invite) await send(`/api/invites/${encodeURIComponent(invite)}`, { name: form.name.value, password: form.password.value });
    else await send("/api/session", { email: form.email.value, password: form.password.value });
    location.replace(landing(location.hash));
  } catch (err) {
    problem.textContent = err.message;
    form.password.value = "";
    form.password.focus();
  } finally {
    button.disabled = false;
  }
});

setUp();
