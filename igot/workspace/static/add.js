// Adding interviews from the library's page (issue 41, point 1): recordings chosen or dropped, or
// links pasted (one a line), or (when the server was given folders to add them from: Google Drive
// in Colab) the paths of recordings already there, with a name, language, number of speakers and names when known. They
// go to the server's queue (igot.workspace.queue), made one after another; the list below the form
// asks how each is doing every second while one waits or runs (plain requests: Colab's proxy
// carries no WebSockets), and the library is drawn again as each finishes.
//
// The panel and the list are one element kept across the library's redraws, so what is typed in it
// and the files chosen stay while the library grows.
//
// On a team's server (state.me set by team.js) the queue is the team's (igot.workspace.team_queue):
// each running job says which worker makes it ("on gpu-box", "on this server"), its stage and how
// far along it is; a line under the list names the workers connected (api/workers), or says that
// none is and what becomes of the recordings then; the list is asked again every few seconds even
// when nothing runs (a teammate's recordings, a worker coming or going). An upload's id changes
// once its file is whole ("u1", then its id in the team's database): its row follows it.
import { api, withToken } from "./api.js";
import { reload, state } from "./state.js";
import { esc, plural, toast } from "./ui.js";

const TOKEN = document.querySelector('meta[name="igot-token"]').content;
const CHUNK = 8 * 1024 * 1024;  // bytes a request: a proxy (Colab's) may cut a long one
const POLL_MS = 1000;
const TEAM_IDLE_MS = 5000;  // a team's queue with nothing running: asked again this often
const CONNECTED_S = 60;     // a worker heard from this recently is connected (an idle one asks every 2 s)
const ACTIVE = new Set(["uploading", "waiting", "running"]);
const RECORDINGS = ".mp3,.m4a,.aac,.wav,.flac,.ogg,.oga,.opus,.weba,.mp4,.m4v,.webm,.mov,.mkv,.ogv,.avi,.wma,.amr,.3gp,audio/*,video/*";
// Whisper detects the language by itself; these are the ones most asked for.
const LANGUAGES = [["en", "English"], ["pt", "Portuguese"], ["es", "Spanish"], ["fr", "French"], ["de", "German"],
  ["it", "Italian"], ["nl", "Dutch"], ["pl", "Polish"], ["ru", "Russian"], ["uk", "Ukrainian"], ["tr", "Turkish"],
  ["ar", "Arabic"], ["hi", "Hindi"], ["ja", "Japanese"], ["ko", "Korean"], ["zh", "Chinese"], ["sv", "Swedish"]];

let box = null;        // the panel and the queue's list
let chosen = [];       // the files chosen or dropped, not added yet
let polling = false;   // a poll is under way or due
let timer = null;      // the next poll, when due
let again = false;     // asked for while one was under way
let seenDone = null;   // the jobs already seen finished (null: not asked yet)
let pathsShown = false; // the paths field is drawn (once the server names its recording folders)
let workersDrawn = "";    // the workers' list as last drawn
const renamed = new Map(); // an upload's id while it came ("u1") -> its id once whole (a team's queue)
const finishing = new Map(); // an upload's id -> its last chunk, sent, its answer not come yet

const team = () => Boolean(state.me);

// Draw the panel in `where` (a placeholder of the library's page) and show the queue.
export function mountAdding(where) {
  if (!box) box = build();
  where.replaceWith(box);
  poll();
}

function build() {
  const el = document.createElement("div");
  el.className = "adding";
  el.innerHTML = `<button type="button" class="primary add-open" aria-expanded="false">Add interviews</button>
    <form class="add-form" autocomplete="off" hidden>
      <div class="drop" tabindex="0"><b>Drop recordings here</b> or
        <label class="button">choose files<input type="file" name="files" multiple accept="${RECORDINGS}" hidden></label>
        <span class="hint">audio or video, several at once</span><ul class="chosen"></ul></div>
      <label class="links">Links <span class="hint">one a line: YouTube, Vimeo, or a file's address; a playlist adds each of its videos</span>
        <textarea name="links" rows="2" placeholder="https://www.youtube.com/watch?v=…"></textarea></label>
      <div class="paths-slot"></div>
      <div class="add-row">
        <label>Name <span class="hint">one recording only</span><input name="name" maxlength="200" placeholder="its file name or title"></label>
        <label>Language <select name="language"><option value="">Detect</option>${LANGUAGES.map(([code, name]) =>
          `<option value="${code}">${name}</option>`).join("")}</select></label>
        <label>Speakers <input name="speakers" type="number" min="1" max="50" placeholder="detect"></label>
        <label>Names <span class="hint">in order, if known</span><input name="names" maxlength="200" placeholder="Ana, Bruno"></label>
      </div>
      <p class="form-error" role="alert"></p>
      <div class="buttons"><button type="submit" class="primary">Add</button><button type="button" class="add-close">Close</button></div>
    </form>
    <ul class="queue" aria-label="Recordings being added"></ul>${team() ? `
    <div class="workers" aria-label="Workers"><p class="workers-line"></p><ul class="workers-list"></ul></div>` : ""}`;
  const form = el.querySelector("form");
  const open = el.querySelector(".add-open");
  const show = (yes) => { form.hidden = !yes; open.setAttribute("aria-expanded", String(yes)); };
  open.addEventListener("click", () => show(form.hidden));
  el.querySelector(".add-close").addEventListener("click", () => show(false));
  form.files.addEventListener("change", () => { choose(form.files.files); form.files.value = ""; });
  const drop = el.querySelector(".drop");
  drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    drop.classList.remove("over");
    choose(event.dataTransfer.files);
  });
  el.querySelector(".chosen").addEventListener("click", (event) => {
    const remove = event.target.closest("button.remove");
    if (!remove) return;
    chosen.splice(Number(remove.closest("[data-i]").dataset.i), 1);
    drawChosen();
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); add(form, show); });
  el.querySelector(".queue").addEventListener("click", (event) => {
    const button = event.target.closest("button.job-cancel");
    if (button) cancel(button.closest("[data-id]").dataset.id);
  });
  return el;
}

function choose(files) {
  chosen.push(...files);
  drawChosen();
}

function drawChosen() {
  box.querySelector(".chosen").innerHTML = chosen.map((f, i) => `<li data-i="${i}">${esc(f.name)}
    <span class="hint">${size(f.size)}</span><button type="button" class="remove" aria-label="Remove ${esc(f.name)}" title="Remove">×</button></li>`).join("");
}

function size(bytes) {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GB` : bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MB`
    : `${Math.ceil(bytes / 1024)} kB`;
}

// The batch to the server (everything is checked there before any job is made), then each file's
// bytes, one file after another, in pieces.
async function add(form, show) {
  const error = form.querySelector(".form-error");
  error.textContent = "";
  const files = chosen.slice();
  const body = { files: files.map((f) => ({ name: f.name, size: f.size })), links: form.links.value,
    paths: form.paths ? form.paths.value : "",
    name: form.name.value, language: form.language.value, speakers: form.speakers.value, names: form.names.value };
  let added;
  try {
    added = await api("api/queue", { method: "POST", body });
  } catch (err) {
    error.textContent = err.message;
    return;
  }
  chosen = [];
  drawChosen();
  for (const field of ["links", "paths", "name", "speakers", "names"]) if (form[field]) form[field].value = "";
  show(false);
  toast(`${plural(added.jobs.length, "recording")} added: each becomes an interview in turn.`);
  poll();
  const uploads = added.jobs.filter((job) => job.state === "uploading");
  for (let i = 0; i < uploads.length; i += 1) await upload(uploads[i], files[i]);
}

async function upload(job, file) {
  for (let offset = 0; offset < file.size || offset === 0; offset += CHUNK) {
    const last = offset + CHUNK >= file.size;
    if (last) {  // its answer may bring the job's new id: a listing without the old one waits for it
      const sent = send(job, file, offset, true);
      finishing.set(job.id, sent);
      try { await sent; } finally { finishing.delete(job.id); }
      return;
    }
    if (!await send(job, file, offset, false)) return;
  }
}

// One chunk: whether the next may follow.
async function send(job, file, offset, last) {
  const address = `api/queue/${encodeURIComponent(job.id)}/file?offset=${offset}${last ? "&last=1" : ""}`;
  let response;
  try {
    // the page's token in its header too: a team's server takes a change's token from there only
    response = await fetch(withToken(address), { method: "PUT", body: file.slice(offset, offset + CHUNK),
      headers: { "Content-Type": "application/octet-stream", "X-iGot-Token": TOKEN } });
  } catch (err) {
    toast(`${file.name} could not be sent (${err.message}): add it again.`, "error");
    return false;
  }
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    if (response.status !== 404) toast(data.error || `${file.name} could not be sent: add it again.`, "error");
    return false;  // cancelled meanwhile (404), or refused: the list says so
  }
  if (last) {
    const answer = await response.json().catch(() => null);
    if (answer && answer.id !== undefined && String(answer.id) !== job.id) follow(job.id, String(answer.id));
  }
  return true;
}

// A team's upload, whole, is now a job of the database with another id: its row keeps its place
// (and its Cancel button asks for the new id); a listing made just before still says the old one.
function follow(old, now) {
  renamed.set(old, now);
  const list = box.querySelector(".queue");
  const li = [...list.children].find((el) => el.dataset.id === old);
  if (!li) return;
  const already = [...list.children].find((el) => el.dataset.id === now);
  if (already) li.remove();
  else li.dataset.id = now;
}

async function cancel(id) {
  try {
    await api(`api/queue/${encodeURIComponent(id)}/cancel`, { method: "POST", body: {} });
  } catch (err) { toast(err.message, "error"); }
  poll();
}

// Ask the server how the queue is doing; again in a second while one waits or runs and the page
// shows the list. A job newly finished draws the library again.
async function poll() {
  if (timer !== null) {  // the next poll was due later: now instead
    clearTimeout(timer);
    timer = null;
  } else if (polling) {  // one under way: another right after it (what was just added may not be in it)
    again = true;
    return;
  }
  polling = true;
  again = false;
  let jobs;
  let crew = null;
  try {
    const [data, workers] = await Promise.all([api("api/queue"),
      team() ? api("api/workers").catch(() => null) : null]);
    // An upload the server made whole before its answer came: its new id known before its row is drawn.
    const ids = new Set(data.jobs.map((job) => job.id));
    await Promise.all([...finishing].filter(([id]) => !ids.has(id)).map(([, sent]) => sent));
    jobs = data.jobs;
    crew = workers;
    drawPaths(data.recording_folders || []);
  } catch {
    jobs = null;
  }
  polling = false;
  if (!jobs || !box.isConnected) return;
  drawQueue(jobs);
  if (crew) drawWorkers(crew);
  const done = jobs.filter((job) => job.state === "done").map((job) => job.id);
  const fresh = seenDone !== null && done.some((id) => !seenDone.has(id));
  seenDone = new Set([...(seenDone || []), ...done]);
  if (fresh) {
    const focused = box.contains(document.activeElement) ? document.activeElement : null;
    await reload();  // the library with the new interview; the panel comes back with it
    if (focused && box.isConnected) focused.focus();
    return;
  }
  const active = jobs.some((job) => ACTIVE.has(job.state));
  if (again || active || team()) {
    polling = true;
    timer = setTimeout(() => { timer = null; polling = false; poll(); }, again ? 0 : active ? POLL_MS : TEAM_IDLE_MS);
  }
}

// The paths field, only where the server adds recordings by their path (it names the folders); the
// first folder gives the example (in Colab: /content/drive/MyDrive).
function drawPaths(folders) {
  if (pathsShown || !folders.length) return;
  pathsShown = true;
  const where = folders.join(" or ");
  box.querySelector(".paths-slot").innerHTML = `<label class="paths">Paths
      <span class="hint">one a line: recordings already in ${esc(where)}, made into interviews where they are</span>
      <textarea name="paths" rows="2" placeholder="${esc(folders[0])}/interviews/ana.mp4"></textarea></label>`;
}

function drawQueue(listed) {
  const list = box.querySelector(".queue");
  // An upload listed by its old id (a listing made as it became whole) stands under its new one, once.
  const ids = new Set(listed.map((job) => job.id));
  const jobs = listed.filter((job) => !(renamed.has(job.id) && ids.has(renamed.get(job.id))))
    .map((job) => (renamed.has(job.id) ? { ...job, id: renamed.get(job.id) } : job));
  const kept = new Map([...list.children].map((li) => [li.dataset.id, li]));
  jobs.forEach((job) => {
    let li = kept.get(job.id);
    if (!li) {
      li = document.createElement("li");
      li.dataset.id = job.id;
    }
    list.append(li);  // in the queue's order
    kept.delete(job.id);
    const look = JSON.stringify([job.state, job.stage, job.line, job.stopping, job.stem, ...(job.worker ? [job.worker] : [])]);
    if (li.dataset.look !== look) {
      li.dataset.look = look;
      li.className = `job ${job.state}`;
      li.innerHTML = jobHtml(job);
    }
    const bar = li.querySelector(".bar span");
    if (bar) bar.style.width = `${Math.round(job.share * 100)}%`;
    const left = li.querySelector(".job-left");
    if (left) left.textContent = timeLeft(job);
  });
  kept.forEach((li) => li.remove());
}

function jobHtml(job) {
  const name = job.state === "done" && job.stem
    ? `<a class="job-name" href="#/interview/${encodeURIComponent(job.stem)}">${esc(job.name)}</a>`
    : `<span class="job-name">${esc(job.name)}</span>`;
  const stage = { uploading: "uploading", waiting: "waiting", running: job.stopping ? "stopping after this step…" : job.stage,
    done: "in the library", failed: "failed", cancelled: "cancelled" }[job.state] || job.state;
  const bar = ACTIVE.has(job.state) ? `<span class="bar" aria-hidden="true"><span></span></span><span class="job-left"></span>` : "";
  const button = ACTIVE.has(job.state) ? (job.stopping ? "" : `<button type="button" class="link job-cancel">Cancel</button>`)
    : `<button type="button" class="link job-cancel" title="Take it off this list">Remove</button>`;
  // A team's running job: the worker that makes it, under its stage.
  const where = job.worker ? `<span class="job-where"><span class="job-stage">${esc(stage)}</span>`
    + `<span class="job-worker">on ${esc(job.worker)}</span></span>` : `<span class="job-stage">${esc(stage)}</span>`;
  return `${name}${where}${bar}${button}
    ${job.line ? `<p class="job-line${job.state === "failed" ? " error" : ""}">${esc(job.line)}</p>` : ""}`;
}

// "about 3 min left", as the terminal says it (igot.runtime.pace.say_minutes).
function timeLeft(job) {
  if (job.state === "uploading") return `${Math.round(job.share * 100)}% sent`;
  if (job.state === "running" && job.worker && job.total > 0 && (job.left === null || job.left === undefined)) {
    return `${Math.round(job.share * 100)}% of this step`;  // a team's job: how far along its stage
  }
  if (job.state !== "running" || job.left === null || job.left === undefined) return "";
  if (job.left < 60) return "less than a minute left";
  const minutes = Math.round(job.left / 60);
  return minutes >= 60 ? `about ${Math.floor(minutes / 60)} h ${minutes % 60} min left` : `about ${minutes} min left`;
}

// A team's workers (api/workers): those connected (heard from in the last minute, or making a
// job), with their device and when last heard; others the team still has, greyed; and when none
// is connected, what becomes of the recordings (the server's own worker makes them, or they wait).
function drawWorkers(crew) {
  const here = box.querySelector(".workers");
  if (!here) return;
  const now = Date.now();
  const ago = (w) => (w.seen ? (now - Date.parse(w.seen)) / 1000 : Infinity);
  const connected = crew.workers.filter((w) => w.job || ago(w) < CONNECTED_S);
  const line = connected.length
    ? `<b>Workers</b>: ${connected.length} connected${crew.server_works ? "; this server makes interviews too" : ""}.`
    : `<b>No worker connected</b>: ${crew.server_works ? "this server makes the interviews itself."
      : "the recordings wait until one connects (this server makes none itself)."}`;
  const items = crew.workers.map((w) => {
    const on = connected.includes(w);
    const doing = w.job ? `making ${esc(w.job)}` : w.seen ? `seen ${seenAgo(ago(w))}` : "never connected";
    return `<li class="worker ${on ? "connected" : "away"}" data-name="${esc(w.name)}"><span class="worker-name">${esc(w.name)}</span>`
      + `${w.device ? ` <span class="worker-device">${esc(w.device)}</span>` : ""} <span class="worker-seen">${doing}</span></li>`;
  }).join("");
  const html = `<p class="workers-line">${line}</p><ul class="workers-list">${items}</ul>`;
  if (workersDrawn !== html) {
    workersDrawn = html;
    here.innerHTML = html;
  }
}

function seenAgo(seconds) {
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${Math.round(seconds)} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} days ago`;
}
