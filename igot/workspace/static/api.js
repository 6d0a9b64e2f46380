// The page's door to its server. Every request carries the token the server wrote into this page
// (another page cannot read it); links (a download, the player, an export) carry it as ?token=.
// A search or question in an address this page did not make itself (a link from elsewhere) waits
// for the user's click: a link never makes the workspace work.
const TOKEN = document.querySelector('meta[name="igot-token"]').content;
const made = new Set();  // the addresses this page went to itself: their search or question runs

// A link of the page: with the token, as api() sends it.
export function withToken(url) { return `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(TOKEN)}`; }

// The interview's own recording is played from this server, with the token.
export function playable(spec) { return spec.src && !spec.external ? { ...spec, src: withToken(spec.src) } : spec; }

// Go to a search or question the user asked for.
export function go(hash) { made.add(hash); location.hash = hash; }
// The user asked for the address shown (pressed its Search or Ask button): it may run.
export function allowHere() { made.add(location.hash); }
// Whether the address shown is one the user asked for.
export function asked() { return made.has(location.hash); }

// A team's server answers 401 once the session ended (signed out elsewhere, removed by an admin):
// the one function told (team.js: the signed-out banner) runs once, and no request is sent after.
let signedOut = () => {};
let ended = false;
export function onSignedOut(fn) { signedOut = fn; }

// JSON from the server; an answer other than 2xx throws an Error with its message and .status.
export async function api(path, options = {}) {
  if (ended) {
    const err = new Error("You are signed out: sign in again.");
    err.status = 401;
    throw err;
  }
  const opts = { method: options.method || "GET", headers: { "X-iGot-Token": TOKEN } };
  if (options.body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(options.body);
  }
  const response = await fetch(path, opts);
  const data = await response.json().catch(() => ({ error: `${response.status} ${response.statusText}` }));
  if (!response.ok) {
    const err = new Error(data.error || `The workspace answered ${response.status}.`);
    err.status = response.status;
    if (response.status === 401 && data.signin && !ended) {
      ended = true;
      signedOut(err.message, data.signin);
    }
    throw err;
  }
  return data;
}
