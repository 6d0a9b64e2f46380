// The iGot workspace page: the library, an interview with its player, tags and search.
// One page, routed by the address's #fragment, so every request stays relative to where the page
// is served from (127.0.0.1, or Colab's port proxy under its own path). Data comes from api/...;
// every change names the version of the interview it was made on (a stale one is refused: 409).
// Every request carries the token the server wrote into this page (another page cannot read it),
// and a search or question in an address this page did not make itself (a link from elsewhere)
// waits for the user's click: a link never makes the workspace work.
"use strict";

(function () {
  const view = document.getElementById("view");
  const toastBox = document.getElementById("toast");
  const state = { route: "", interview: null, player: null, now: -1, clipEnd: null, tags: [], timer: null, pane: null };
  const TOKEN = document.querySelector('meta[name="igot-token"]').content;
  const made = new Set();  // the addresses this page went to itself: their search or question runs

  // A link of the page (a download, the player, an export): with the token, as api() sends it.
  function withToken(url) { return `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(TOKEN)}`; }

  // The interview's own recording is played from this server, with the token.
  function playable(spec) { return spec.src && !spec.external ? { ...spec, src: withToken(spec.src) } : spec; }

  // Go to a search or question the user asked for.
  function go(hash) { made.add(hash); location.hash = hash; }
  function asked() { return made.has(location.hash); }

  // --- helpers -------------------------------------------------------------------------------
  function esc(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  function clock(seconds) {
    const s = Math.max(0, Math.floor(seconds || 0));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    return h ? `${h}:${String(m).padStart(2, "0")}:${String(r).padStart(2, "0")}` : `${m}:${String(r).padStart(2, "0")}`;
  }

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  async function api(path, options = {}) {
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
      throw err;
    }
    return data;
  }

  function toast(message, kind = "info") {
    toastBox.textContent = message;
    toastBox.className = `show ${kind}`;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { toastBox.className = ""; }, kind === "error" ? 9000 : 3500);
  }

  function setColours(data) {
    // The exports' speaker colours and border styles (igot.outputs.export.PALETTE), as CSS variables.
    const root = document.documentElement.style;
    data.palette.forEach((c, i) => root.setProperty(`--c${i}`, c));
    data.borders.forEach((b, i) => root.setProperty(`--b${i}`, b));
    state.colours = data.palette.length;
    state.borders = data.borders.length;
  }

  function speakerClass(i) { return `s${i % (state.colours || 8)} b${i % (state.borders || 4)}`; }

  function stopPlayer() {
    clearInterval(state.timer);
    state.timer = null;
    state.player = null;
    state.interview = null;
    state.now = -1;
    state.clipEnd = null;
  }

  // --- routing -------------------------------------------------------------------------------
  function route() {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path, query] = hash.split("?");
    const params = new URLSearchParams(query || "");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    closePopover();
    stopPlayer();
    state.pane = null;
    state.phraseEls = null;  // the transcript shown, if any, goes with the page
    state.order = null;
    state.shown = (state.shown || 0) + 1;  // answers that come after the user moved on are dropped
    if (parts[0] !== "search") document.getElementById("q").value = "";
    document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active",
      (a.dataset.nav === "tags" && (parts[0] === "tags" || parts[0] === "tag")) || (a.dataset.nav === "library" && !parts.length)
      || a.dataset.nav === parts[0]));
    const show = parts[0] === "interview" ? showInterview(parts[1], params)
      : parts[0] === "tag" ? showTag(parts.slice(1).join("/"))
      : parts[0] === "tags" ? showLibrary(true)
      : parts[0] === "search" ? showSearch(params)
      : parts[0] === "ask" ? showAsk(params)
      : parts[0] === "themes" ? showThemes(params)
      : showLibrary(false);
    return show.catch((err) => {
      view.innerHTML = `<div class="page"><p class="error">${esc(err.message)}</p><p><a href="#/">Back to the interviews</a></p></div>`;
    });
  }

  // --- the library ---------------------------------------------------------------------------
  async function showLibrary(tagsOnly) {
    const data = await api("api/library");
    setColours(data);
    state.tags = data.tags.map((t) => t.tag);
    const rows = data.interviews.map((iv) => `
      <tr><td><a class="title" href="#/interview/${encodeURIComponent(iv.stem)}">${esc(iv.name)}</a></td>
      <td>${esc(iv.date)}</td><td>${esc(iv.language)}</td><td class="num">${clock(iv.duration)}</td>
      <td>${esc(iv.speakers.join(", "))}</td><td class="num">${iv.highlights || ""}</td></tr>`).join("");
    const skipped = data.skipped.length ? `<div class="skipped"><b>${plural(data.skipped.length, "file")} skipped:</b><ul>${
      data.skipped.map((s) => `<li><code>${esc(s.file)}</code>: ${esc(s.why)}</li>`).join("")}</ul></div>` : "";
    const interviews = tagsOnly ? "" : `
      <section><h1>Interviews <span class="count">${data.interviews.length}</span></h1>${skipped}
      ${data.interviews.length ? `<table class="list"><thead><tr><th>Interview</th><th>Date</th><th>Language</th>
      <th class="num">Length</th><th>Speakers</th><th class="num">Highlights</th></tr></thead><tbody>${rows}</tbody></table>`
        : `<p class="empty">No interviews in this folder yet: <code>igot run</code> a recording with <code>--out</code> this folder.</p>`}
      </section>`;
    view.innerHTML = `<div class="page">${interviews}<section id="board"><h${tagsOnly ? 1 : 2}>Tags <span class="count">${data.tags.length}</span></h${tagsOnly ? 1 : 2}>
      ${boardTable(data.tags)}</section></div>`;
    wireRenames(view);
  }

  function boardTable(tags) {
    if (!tags.length) return `<p class="empty">No highlights yet. Open an interview, select words in its transcript and tag them.</p>`;
    return `<table class="list board"><thead><tr><th>Tag</th><th class="num">Highlights</th><th class="num">Interviews</th>
      <th class="num">People</th><th></th></tr></thead><tbody>${tags.map((t) => `
      <tr data-tag="${esc(t.tag)}"><td><a class="tag" href="#/tag/${encodeURIComponent(t.tag)}">${esc(t.tag)}</a></td>
      <td class="num highlights">${t.highlights}</td><td class="num interviews">${t.interviews}</td><td class="num people">${t.people}</td>
      <td class="actions"><button type="button" class="link rename">Rename or merge</button></td></tr>`).join("")}</tbody></table>`;
  }

  function wireRenames(root) {
    root.querySelectorAll("button.rename").forEach((button) => button.addEventListener("click", () => {
      const old = button.closest("[data-tag]").dataset.tag;
      renameForm(button.parentElement, old);
    }));
  }

  function renameForm(where, old) {
    where.innerHTML = `<form class="rename-form"><input name="new" value="${esc(old)}" maxlength="60" aria-label="New name for ${esc(old)}">
      <button class="primary" type="submit">Rename</button><button type="button" class="cancel">Cancel</button></form>`;
    const form = where.querySelector("form");
    form.new.select();
    form.querySelector(".cancel").addEventListener("click", () => route());
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const done = await api("api/tags/rename", { method: "POST", body: { old, new: form.new.value } });
        toast(`"${old}" is now "${form.new.value.trim()}" in ${plural(done.changed.length, "interview")}.`);
        const next = `#/tag/${encodeURIComponent(form.new.value.trim())}`;
        if (location.hash.startsWith("#/tag/")) location.hash = next; else route();
      } catch (err) { toast(err.message, "error"); }
    });
  }

  // --- a shared player for quotes and hits (tag page, search) --------------------------------
  async function playQuote(stem, start, end) {
    if (!state.pane) return;
    if (!state.interview || state.interview.stem !== stem) {
      stopPlayer();
      const data = await api(`api/interviews/${encodeURIComponent(stem)}`);
      state.interview = data;
      const box = state.pane.querySelector(".player-box");
      box.innerHTML = "";
      state.pane.querySelector(".pane-title").innerHTML = `<a href="#/interview/${encodeURIComponent(stem)}?t=${start}">${esc(data.title)}</a>`;
      state.player = await IgotPlayer.create(box, playable(data.player));
      startTicking();
    }
    state.clipEnd = end;
    state.player.seek(start);
    state.player.play();
  }

  function quotePane() {
    return `<aside class="pane"><div class="pane-title">Press ▶ on a quote to play it here</div><div class="player-box"></div></aside>`;
  }

  // --- tags ------------------------------------------------------------------------------------
  async function showTag(tag) {
    const data = await api(`api/tag?name=${encodeURIComponent(tag)}`);
    setColours(data);
    const groups = {};
    data.quotes.forEach((q) => { (groups[q.stem] = groups[q.stem] || []).push(q); });
    const list = Object.values(groups).map((qs) => `
      <section class="quotes"><h2><a href="#/interview/${encodeURIComponent(qs[0].stem)}">${esc(qs[0].interview)}</a>
      <span class="date">${esc(qs[0].date)}</span></h2>${qs.map(quoteCard).join("")}</section>`).join("");
    const enc = encodeURIComponent(tag);
    view.innerHTML = `<div class="page with-pane"><div class="main-col">
      <p class="crumbs"><a href="#/tags">Tags</a> ›</p>
      <h1 class="tag-title" data-tag="${esc(tag)}">${esc(tag)} <span class="count">${plural(data.quotes.length, "highlight")} in ${plural(data.interviews, "interview")}</span></h1>
      <p class="tools"><a class="button" href="${withToken(`api/tag/export?name=${enc}&format=md`)}" download>Export Markdown</a>
      <a class="button" href="${withToken(`api/tag/export?name=${enc}&format=csv`)}" download>Export CSV</a>
      <a class="button" href="${withToken(`api/tag/reel?name=${enc}`)}" download title="Every quote whose recording is on this computer, titled, one after the other">Reel (MP4)</a>
      <span class="rename-slot"><button type="button" class="button rename-tag">Rename or merge…</button></span></p>
      ${list || `<p class="empty">No highlight has this tag.</p>`}</div>${quotePane()}</div>`;
    state.pane = view.querySelector(".pane");
    view.querySelector(".rename-tag").addEventListener("click", (e) => renameForm(e.target.parentElement, tag));
    wirePlayButtons();
  }

  function quoteCard(q) {
    return `<figure class="quote ${speakerClass(q.colour)}" data-stem="${esc(q.stem)}" data-start="${q.start}" data-end="${q.end}">
      <blockquote>${esc(q.quote)}</blockquote>
      <figcaption><button type="button" class="play" title="Play this quote">▶ ${clock(q.start)}</button>
      ${q.speaker ? `<span class="who">${esc(q.speaker)}</span>` : ""}
      <a href="#/interview/${encodeURIComponent(q.stem)}?t=${q.start}">open in the interview</a>
      ${q.video ? `<a href="${esc(q.video)}" target="_blank" rel="noopener">video</a>` : ""}
      ${q.note ? `<span class="note">${esc(q.note)}</span>` : ""}</figcaption></figure>`;
  }

  function wirePlayButtons() {
    view.querySelectorAll("button.play:not([data-wired])").forEach((b) => {
      b.dataset.wired = "1";
      b.addEventListener("click", () => {
        const card = b.closest("[data-stem]");
        playQuote(card.dataset.stem, Number(card.dataset.start), Number(card.dataset.end)).catch((err) => toast(err.message, "error"));
      });
    });
  }

  // --- search: by words and by meaning together ------------------------------------------------
  function filterPicks(lib, params, names) {
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

  const HOW = { meaning: "by meaning", both: "words + meaning" };

  function hitItem(h, n) {
    return `<li class="hit ${speakerClass(h.colour)}" data-stem="${esc(h.stem)}" data-start="${h.start}" data-end="${h.end}" data-phrase="${h.phrase}">
      <div class="hit-head">${n ? `<span class="num">${n}</span>` : ""}<a href="#/interview/${encodeURIComponent(h.stem)}?t=${h.start}">${esc(h.interview)}</a>
      ${h.speaker ? `<span class="who">${esc(h.speaker)}</span>` : ""}
      <button type="button" class="play">▶ ${clock(h.start)}</button>
      ${HOW[h.how] ? `<span class="how ${esc(h.how)}" title="How this phrase was found">${HOW[h.how]}</span>` : ""}
      <button type="button" class="link highlight-hit">Highlight</button></div>
      <p class="text">${marked(h.text, h.marks || [])}</p></li>`;
  }

  function wireHits(root) {
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

  // Where the search and Ask pages start: the library (its colours, its tags to suggest), the
  // question, and the filters passed on to the server.
  async function questionPage(params, keys) {
    const lib = await api("api/library");
    setColours(lib);
    state.tags = lib.tags.map((t) => t.tag);
    const query = new URLSearchParams();
    keys.forEach((k) => { if (params.get(k)) query.set(k, params.get(k)); });
    return { lib, q: params.get("q") || "", query };
  }

  async function showSearch(params) {
    const shown = state.shown;
    const { lib, q, query } = await questionPage(params, ["q", "interview", "speaker", "language", "tag"]);
    document.getElementById("q").value = q;
    view.innerHTML = `<div class="page with-pane"><div class="main-col"><h1>Search</h1>
      <form class="filters" id="filters">${filterPicks(lib, params, ["interview", "speaker", "language", "tag"])}</form>
      <p class="status" aria-live="polite">${q ? `<span class="spinner"></span>Searching every interview by words and by meaning…` : "Type words to find in every interview, or what someone meant."}</p>
      <p class="meaning-line" hidden></p>
      <ol class="hits"></ol></div>${quotePane()}</div>`;
    state.pane = view.querySelector(".pane");
    view.querySelector("#filters").addEventListener("change", (e) => {
      const next = new URLSearchParams(query);
      if (e.target.value) next.set(e.target.name, e.target.value); else next.delete(e.target.name);
      go(`#/search?${next}`);
    });
    if (!q) return;
    if (!asked()) {  // opened by a link: the user says whether to search
      view.querySelector(".status").innerHTML = `<button type="button" class="primary run">Search for “${esc(q)}”</button>`;
      view.querySelector(".run").addEventListener("click", () => { made.add(location.hash); route(); });
      return;
    }
    const found = await api(`api/search?${query}`);
    if (shown !== state.shown) return;
    const meaningLine = view.querySelector(".meaning-line");
    if (found.line) { meaningLine.textContent = found.line; meaningLine.hidden = false; }
    const byMeaning = found.hits.filter((h) => h.how !== "words").length;
    view.querySelector(".status").textContent = `${plural(found.count, "phrase")} found${
      found.meaning ? ` (${byMeaning} by meaning)` : ""}${found.count > found.hits.length ? `, the first ${found.hits.length} shown` : ""}.`;
    view.querySelector(".hits").innerHTML = found.hits.map((h) => hitItem(h)).join("");
    wireHits(view);
  }

  function marked(text, marks) {
    let out = "", pos = 0;
    for (const [a, b] of marks) { out += esc(text.slice(pos, a)) + `<mark>${esc(text.slice(a, b))}</mark>`; pos = b; }
    return out + esc(text.slice(pos));
  }

  document.getElementById("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const q = document.getElementById("q").value.trim();
    if (q) go(`#/search?q=${encodeURIComponent(q)}`); else location.hash = "#/";
  });

  // --- ask: the phrases that answer a question, then the local LLM's answer, every quote checked ---
  async function showAsk(params) {
    const shown = state.shown;
    const { lib, q, query } = await questionPage(params, ["q", "interview", "speaker", "tag"]);
    view.innerHTML = `<div class="page with-pane"><div class="main-col"><h1>Ask your interviews</h1>
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
      if (`#/ask?${next}` === location.hash) { made.add(location.hash); route(); } else go(`#/ask?${next}`);
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

  // --- themes: highlights grouped by meaning; a highlight moved to another theme is kept ---------
  async function showThemes(params) {
    const shown = state.shown;
    const tag = params.get("tag") || "";
    const lib = await api("api/library");
    setColours(lib);
    view.innerHTML = `<div class="page with-pane wide"><div class="main-col"><h1>Themes</h1>
      <form class="filters" id="theme-filter"><label>Highlights <select name="tag"><option value="">all of them</option>${
        lib.tags.map((t) => `<option value="${esc(t.tag)}"${t.tag === tag ? " selected" : ""}>tagged ${esc(t.tag)}</option>`).join("")}</select></label></form>
      <p class="status" aria-live="polite"><span class="spinner"></span>Grouping the highlights by meaning…</p>
      <div class="board-themes" id="themes"></div></div>${quotePane()}</div>`;
    state.pane = view.querySelector(".pane");
    view.querySelector("#theme-filter").addEventListener("change", (e) => {
      location.hash = e.target.value ? `#/themes?tag=${encodeURIComponent(e.target.value)}` : "#/themes";
    });
    const board = await api(`api/themes?tag=${encodeURIComponent(tag)}`);
    if (shown !== state.shown) return;
    drawThemes(board);
  }

  function drawThemes(board) {
    state.board = board;
    const count = board.themes.reduce((n, t) => n + t.cards.length, 0);
    view.querySelector(".status").innerHTML = count
      ? `${plural(count, "highlight")} in ${plural(board.themes.length, "theme")}${board.by_meaning ? ", grouped by meaning" : ""}. Drag a quote to another theme (or use its “Move to”): it stays there.${
        board.line ? `<br><span class="meaning-line">${esc(board.line)}</span>` : ""}`
      : `No highlights${board.tag ? ` tagged ${esc(board.tag)}` : ""} yet. Open an interview, select words in its transcript and highlight them.`;
    const options = (here) => board.themes.filter((t) => t.id !== here).map((t) => `<option value="${esc(t.id)}">${esc(t.name)}</option>`).join("");
    view.querySelector("#themes").innerHTML = board.themes.map((t) => `
      <section class="theme" data-theme="${esc(t.id)}"><h2>${esc(t.name)}</h2>
      <p class="backing"><span class="n-quotes">${plural(t.cards.length, "quote")}</span> · <span class="n-interviews">${plural(t.interviews, "interview")}</span> · <span class="n-people">${plural(t.people, "person").replace("persons", "people")}</span></p>
      ${t.cards.map((c) => `<figure class="quote card ${speakerClass(c.colour)}" data-key="${esc(c.key)}" data-stem="${esc(c.stem)}" data-start="${c.start}" data-end="${c.end}">
        <blockquote>${esc(c.quote)}</blockquote>
        <figcaption><button type="button" class="play" title="Play this quote">▶ ${clock(c.start)}</button>
        ${c.speaker ? `<span class="who">${esc(c.speaker)}</span>` : ""}
        <a href="#/interview/${encodeURIComponent(c.stem)}?t=${c.start}">${esc(c.interview)}</a>
        ${c.tags.map((x) => `<a class="tag" href="#/tag/${encodeURIComponent(x)}">${esc(x)}</a>`).join("")}</figcaption>
        <label class="move">Move to <select aria-label="Move this highlight to another theme"><option value="">…</option>${options(t.id)}<option value="new">a new theme</option></select></label>
      </figure>`).join("")}</section>`).join("");
    view.querySelectorAll(".theme .move select").forEach((select) => select.addEventListener("change", () => {
      if (select.value) moveCard(select.closest("[data-key]").dataset.key, select.value, select);
    }));
    // Or drag a quote onto another theme.
    view.querySelectorAll(".theme .card").forEach((card) => {
      card.draggable = true;
      card.addEventListener("dragstart", (e) => {
        e.dataTransfer.setData("text/plain", card.dataset.key);
        e.dataTransfer.effectAllowed = "move";
        card.classList.add("dragging");
      });
      card.addEventListener("dragend", () => card.classList.remove("dragging"));
    });
    view.querySelectorAll(".theme").forEach((theme) => {
      theme.addEventListener("dragover", (e) => { e.preventDefault(); theme.classList.add("drop"); });
      theme.addEventListener("dragleave", (e) => { if (!theme.contains(e.relatedTarget)) theme.classList.remove("drop"); });
      theme.addEventListener("drop", (e) => {
        e.preventDefault();
        theme.classList.remove("drop");
        const key = e.dataTransfer.getData("text/plain");
        const from = state.board.themes.find((t) => t.cards.some((c) => c.key === key));
        if (from && from.id !== theme.dataset.theme) moveCard(key, theme.dataset.theme);
      });
    });
    wirePlayButtons();
  }

  async function moveCard(key, to, select) {
    try {
      const next = await api("api/themes/move", { method: "POST", body: { version: state.board.version, tag: state.board.tag, highlight: key, to } });
      drawThemes(next);
      toast("Highlight moved.");
    } catch (err) {
      if (select) select.value = "";
      toast(err.message, "error");
      if (err.status === 409 && !document.getElementById("reload-themes")) {
        view.querySelector(".status").insertAdjacentHTML("afterend", `<p class="stale">The themes changed in another tab or an interview. <button type="button" id="reload-themes" class="primary">Reload</button></p>`);
        document.getElementById("reload-themes").addEventListener("click", () => route());
      }
    }
  }

  // --- an interview ----------------------------------------------------------------------------
  async function showInterview(stem, params) {
    const [data, lib] = await Promise.all([api(`api/interviews/${encodeURIComponent(stem)}`), api("api/tags")]);
    setColours(data);
    state.tags = lib.tags.map((t) => t.tag);
    state.interview = data;
    const speakers = data.speakers.filter((s) => s.name);
    view.innerHTML = `<div class="interview">
      <aside class="side"><div class="player-box" id="player"></div>
        <div class="facts"><h1>${esc(data.title)}</h1><p class="meta">${[data.created.slice(0, 10), data.language, clock(data.duration)].filter(Boolean).map(esc).join(" · ")}</p>
        <p class="speakers">${speakers.map((s) => `<span class="who ${speakerClass(s.colour)}">${esc(s.name)}</span>`).join(" ")}</p>
        <p class="files">${Object.entries(data.files).map(([k, href]) => `<a href="${esc(withToken(href))}" target="_blank" rel="noopener">${k.toUpperCase()}</a>`).join(" ")}</p></div>
        <h2>Highlights <span class="count" id="hl-count"></span></h2><ul class="hl-list" id="hl-list"></ul>
        <p class="keys"><kbd>Space</kbd> play/pause · <kbd>↑</kbd><kbd>↓</kbd> phrase by phrase · select words to highlight</p>
      </aside>
      <section class="transcript" id="transcript" aria-label="Transcript">${transcriptHtml(data)}</section></div>`;
    state.phraseEls = [...view.querySelectorAll(".phrase")];
    state.order = data.phrases.map((p, i) => i).sort((a, b) => data.phrases[a].start - data.phrases[b].start);
    renderHighlights();
    const transcript = view.querySelector("#transcript");
    transcript.addEventListener("click", onTranscriptClick);
    transcript.addEventListener("mouseup", () => setTimeout(offerHighlight, 0));
    transcript.addEventListener("keyup", (e) => { if (e.shiftKey) offerHighlight(); });
    state.player = await IgotPlayer.create(view.querySelector("#player"), playable(data.player));
    if (state.interview !== data) return;  // the user moved on while the player loaded
    startTicking();
    const t = Number(params.get("t"));
    if (params.has("t") && isFinite(t)) goTo(phraseAt(t), t);
  }

  function transcriptHtml(data) {
    if (!data.phrases.length) return `<p class="empty">No speech was found in this recording.</p>`;
    const colour = Object.fromEntries(data.speakers.map((s) => [s.id, s]));
    let out = "", last = null;
    data.phrases.forEach((p, i) => {
      if (!p.text) { out += `<span class="phrase" data-i="${i}" hidden></span>`; return; }
      if (last === null || p.speaker !== last) {
        if (last !== null) out += "</p></div>";
        const s = colour[p.speaker] || { name: "", colour: 0 };
        out += `<div class="turn ${speakerClass(s.colour)}"><div class="head">${s.name ? `<b class="who">${esc(s.name)}</b>` : ""}<span class="time">${clock(p.start)}</span></div><p>`;
        last = p.speaker;
      }
      // Each word in its own span (a selection is turned into times by its words), and the
      // space between two words too, so that a highlight is marked without gaps.
      let text = "", pos = 0;
      p.words.forEach(([c0, c1], k) => {
        const gap = p.text.slice(pos, c0);
        text += (gap && k ? `<span class="g">${esc(gap)}</span>` : esc(gap)) + `<span class="w" data-w="${k}">${esc(p.text.slice(c0, c1))}</span>`;
        pos = c1;
      });
      out += `<span class="phrase" data-i="${i}" title="${clock(p.start)}">${text + esc(p.text.slice(pos))}</span> `;
    });
    return out + "</p></div>";
  }

  function covered(word, h) {
    const middle = (word[2] + word[3]) / 2;
    return middle >= h.start - 1e-3 && middle <= h.end + 1e-3;
  }

  function renderHighlights() {
    const data = state.interview;
    view.querySelectorAll(".w.hl, .g.hl").forEach((w) => { w.classList.remove("hl"); w.removeAttribute("data-tags"); w.removeAttribute("title"); });
    data.highlights.forEach((h) => {
      data.phrases.forEach((p, i) => {
        if (p.start > h.end + 1e-3 || p.end < h.start - 1e-3) return;
        const el = state.phraseEls[i];
        p.words.forEach((w, k) => {
          if (!covered(w, h)) return;
          const span = el.querySelector(`.w[data-w="${k}"]`);
          const tags = new Set((span.dataset.tags || "").split(", ").filter(Boolean));
          h.tags.forEach((t) => tags.add(t));
          span.classList.add("hl");
          span.dataset.tags = [...tags].join(", ");
          span.title = [...tags].join(", ") || "highlight";
        });
      });
    });
    view.querySelectorAll(".g").forEach((g) => {
      const before = g.previousElementSibling, after = g.nextElementSibling;
      if (before && after && before.classList.contains("hl") && after.classList.contains("hl")) g.classList.add("hl");
    });
    document.getElementById("hl-count").textContent = data.highlights.length || "";
    const list = document.getElementById("hl-list");
    const local = data.player.kind === "video" || data.player.kind === "audio";  // clips are cut from local recordings
    list.innerHTML = data.highlights.length ? data.highlights.map((h) => `
      <li class="hl-item ${speakerClass(h.colour)}" data-id="${esc(h.id)}">
        <div class="hl-tags">${h.tags.map((t) => `<a class="tag" href="#/tag/${encodeURIComponent(t)}">${esc(t)}</a>`).join("") || `<span class="tag none">untagged</span>`}</div>
        <button type="button" class="quote-link" title="Play from here">“${esc(h.quote.length > 160 ? h.quote.slice(0, 157) + "…" : h.quote)}”</button>
        <div class="hl-by">${h.speaker ? `<span class="who">${esc(h.speaker)}</span> · ` : ""}${clock(h.start)}
        <button type="button" class="link edit">Edit</button><button type="button" class="link delete">Delete</button>${
          local ? `<a class="link clip" href="${withToken(`api/interviews/${encodeURIComponent(data.stem)}/highlights/${encodeURIComponent(h.id)}/clip`)}" download title="An MP4 of this highlight, titled">Clip</a>` : ""}</div>
        ${h.note ? `<p class="note">${esc(h.note)}</p>` : ""}</li>`).join("")
      : `<li class="empty">Select words or phrases in the transcript to highlight them.</li>`;
    list.querySelectorAll(".hl-item").forEach((li) => {
      const h = data.highlights.find((x) => x.id === li.dataset.id);
      li.querySelector(".quote-link").addEventListener("click", () => goTo(phraseAt(h.start), h.start));
      li.querySelector(".edit").addEventListener("click", (e) => openHighlightForm(e.target.getBoundingClientRect(),
        { stem: data.stem, version: data.version, start: h.start, end: h.end, quote: h.quote, id: h.id, tags: h.tags, note: h.note }, applyChange));
      li.querySelector(".delete").addEventListener("click", (e) => confirmDelete(e.target, h));
    });
  }

  function confirmDelete(button, h) {
    if (button.dataset.sure !== "1") {
      button.dataset.sure = "1";
      button.textContent = "Delete? Click again";
      setTimeout(() => { button.dataset.sure = ""; button.textContent = "Delete"; }, 4000);
      return;
    }
    const data = state.interview;
    api(`api/interviews/${encodeURIComponent(data.stem)}/highlights/${encodeURIComponent(h.id)}?version=${encodeURIComponent(data.version)}`,
      { method: "DELETE" }).then((done) => { applyChange(done); toast("Highlight deleted."); })
      .catch((err) => staleOrError(err));
  }

  function applyChange(done) {
    if (!state.interview) return;
    state.interview.version = done.version;
    state.interview.highlights = done.highlights;
    renderHighlights();
  }

  function staleOrError(err) {
    if (err.status === 409) {
      toast(err.message, "error");
      const list = document.getElementById("hl-list");
      if (list && !document.getElementById("reload-now")) {
        list.insertAdjacentHTML("beforebegin", `<p class="stale">This interview changed in another tab. <button type="button" id="reload-now" class="primary">Reload</button></p>`);
        document.getElementById("reload-now").addEventListener("click", () => route());
      }
    } else toast(err.message, "error");
  }

  // Playback: the phrase being said is marked and kept in view.
  function phraseAt(t) {
    const order = state.order, phrases = state.interview.phrases;
    if (!order || !order.length) return -1;
    let lo = 0, hi = order.length - 1, k = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (phrases[order[mid]].start <= t + 1e-3) { k = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (k < 0) return order[0];
    for (let j = k; j >= Math.max(0, k - 8); j--) {  // a long phrase a back-channel interrupted
      const p = phrases[order[j]];
      if (p.start <= t && t < p.end && p.text) return order[j];
    }
    return order[k];
  }

  function mark(i, scroll) {
    if (i === state.now || !state.phraseEls) return;
    if (state.now >= 0 && state.phraseEls[state.now]) state.phraseEls[state.now].classList.remove("now");
    state.now = i;
    const el = state.phraseEls[i];
    if (!el) return;
    el.classList.add("now");
    if (scroll) {
      const r = el.getBoundingClientRect();
      if (r.top < innerHeight * 0.15 || r.bottom > innerHeight * 0.85) el.scrollIntoView({ block: "center", behavior: "smooth" });
    }
  }

  function goTo(i, t) {
    if (i < 0 || !state.player) return;
    const at = t === undefined ? state.interview.phrases[i].start : t;
    state.player.seek(at);
    state.clipEnd = null;
    mark(i, true);
  }

  function startTicking() {
    clearInterval(state.timer);
    state.timer = setInterval(() => {
      const player = state.player;
      if (!player) return;
      const t = player.time();
      if (state.clipEnd !== null && t >= state.clipEnd && !player.paused()) { player.pause(); state.clipEnd = null; }
      if (state.phraseEls && !player.paused()) mark(phraseAt(t), true);
    }, 100);
  }

  function onTranscriptClick(event) {
    const phrase = event.target.closest(".phrase");
    if (!phrase || !window.getSelection().isCollapsed) return;
    goTo(Number(phrase.dataset.i));
  }

  document.addEventListener("keydown", (event) => {
    if (!state.player || !state.phraseEls) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, button, a, [contenteditable], .popover")) return;
    if (event.key === " " || event.code === "Space") {
      event.preventDefault();
      state.player.toggle();
    } else if (["ArrowDown", "ArrowRight", "ArrowUp", "ArrowLeft"].includes(event.key) && !event.altKey && !event.metaKey && !event.ctrlKey) {
      event.preventDefault();
      const order = state.order;
      const here = order.indexOf(state.now >= 0 ? state.now : phraseAt(state.player.time()));
      let k = here + (event.key === "ArrowDown" || event.key === "ArrowRight" ? 1 : -1);
      while (k >= 0 && k < order.length && !state.interview.phrases[order[k]].text) k += Math.sign(k - here);
      if (k >= 0 && k < order.length) goTo(order[k]);
    } else if (event.key === "Escape") closePopover();
  });

  // Highlighting: a selection of words (inside one phrase or across several) becomes a time span.
  function selectedSpan() {
    const sel = window.getSelection();
    if (!sel.rangeCount || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const transcript = document.getElementById("transcript");
    if (!transcript || !transcript.contains(range.commonAncestorContainer)) return null;
    const data = state.interview;
    let start = Infinity, end = -Infinity;
    const quote = [];
    state.phraseEls.forEach((el, i) => {
      if (!range.intersectsNode(el)) return;
      const p = data.phrases[i], words = [];
      el.querySelectorAll(".w").forEach((w) => {
        if (!range.intersectsNode(w)) return;
        // A word whose selected part is only its edge (a selection ending just past a space) is left out.
        const part = range.cloneRange();
        part.selectNodeContents(w);
        if (range.compareBoundaryPoints(Range.START_TO_END, part) <= 0 || range.compareBoundaryPoints(Range.END_TO_START, part) >= 0) return;
        words.push(p.words[Number(w.dataset.w)]);
      });
      if (!words.length) return;
      start = Math.min(start, words[0][2]);
      end = Math.max(end, words[words.length - 1][3]);
      quote.push(p.text.slice(words[0][0], words[words.length - 1][1]));
    });
    if (!quote.length) return null;
    return { start, end, quote: quote.join(" "), rect: range.getBoundingClientRect() };
  }

  function offerHighlight() {
    closePopover(true);
    const span = selectedSpan();
    if (!span) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "popover offer primary";
    button.textContent = "Highlight";
    place(button, span.rect);
    button.addEventListener("mousedown", (e) => e.preventDefault());  // keep the selection
    button.addEventListener("click", () => {
      const data = state.interview;
      openHighlightForm(span.rect, { stem: data.stem, version: data.version, start: span.start, end: span.end, quote: span.quote }, (done) => {
        applyChange(done);
        window.getSelection().removeAllRanges();
        toast("Highlight saved.");
      });
    });
  }

  function place(el, rect) {
    document.body.appendChild(el);
    const w = el.offsetWidth, h = el.offsetHeight;
    const left = Math.min(Math.max(8, rect.left + rect.width / 2 - w / 2), innerWidth - w - 8);
    const below = rect.bottom + 8 + h < innerHeight;
    el.style.left = `${left}px`;
    el.style.top = `${below ? rect.bottom + 8 : Math.max(8, rect.top - h - 8)}px`;
  }

  function closePopover(offersOnly) {
    document.querySelectorAll(offersOnly ? ".popover.offer" : ".popover").forEach((p) => p.remove());
  }

  function openHighlightForm(rect, what, done) {
    closePopover();
    const box = document.createElement("div");
    box.className = "popover form-pop";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-label", what.id ? "Edit highlight" : "New highlight");
    box.appendChild(document.getElementById("highlight-form").content.cloneNode(true));
    const form = box.querySelector("form"), input = box.querySelector(".tag-input"), chips = box.querySelector(".chips");
    const error = box.querySelector(".form-error");
    box.querySelector(".hl-quote").textContent = `“${what.quote.length > 220 ? what.quote.slice(0, 217) + "…" : what.quote}” · ${clock(what.start)}`;
    box.querySelector("datalist").innerHTML = state.tags.map((t) => `<option value="${esc(t)}">`).join("");
    box.querySelector(".note").value = what.note || "";
    box.querySelector("button[type=submit]").textContent = what.id ? "Save changes" : "Save highlight";
    const tags = [];
    const addChip = (text) => {
      const tag = text.replace(/\s+/g, " ").trim();
      if (!tag || tags.some((t) => t.toLowerCase() === tag.toLowerCase())) return;
      tags.push(tag);
      const chip = document.createElement("span");
      chip.className = "chip";
      chip.textContent = tag;
      const x = document.createElement("button");
      x.type = "button";
      x.textContent = "×";
      x.title = `Remove ${tag}`;
      x.addEventListener("click", () => { tags.splice(tags.indexOf(tag), 1); chip.remove(); input.focus(); });
      chip.appendChild(x);
      chips.insertBefore(chip, input);
    };
    (what.tags || []).forEach(addChip);
    input.addEventListener("keydown", (e) => {
      if ((e.key === "Enter" || e.key === ",") && input.value.trim()) {
        e.preventDefault();
        addChip(input.value);
        input.value = "";
      } else if (e.key === "Backspace" && !input.value && tags.length) {
        tags.pop();
        chips.querySelectorAll(".chip")[tags.length].remove();
      }
    });
    input.addEventListener("input", () => {  // a suggestion picked from the list
      if (state.tags.includes(input.value)) { addChip(input.value); input.value = ""; }
    });
    box.querySelector(".cancel").addEventListener("click", () => closePopover());
    const send = (version) => {
      const body = { version, tags, note: box.querySelector(".note").value };
      const base = `api/interviews/${encodeURIComponent(what.stem)}/highlights`;
      return what.id ? api(`${base}/${encodeURIComponent(what.id)}`, { method: "PATCH", body })
        : api(base, { method: "POST", body: { ...body, start: what.start, end: what.end } });
    };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (input.value.trim()) { addChip(input.value); input.value = ""; }
      error.textContent = "";
      try {
        const result = await send(what.version);
        closePopover();
        what.tags = tags;
        state.tags = [...new Set([...state.tags, ...tags])];
        done(result);
      } catch (err) {
        error.textContent = err.message;
        if (err.status === 409) {
          // Another tab changed the interview: nothing was overwritten. Read it again, keep what
          // was typed here, and offer to save it on the new version.
          const again = document.createElement("button");
          again.type = "button";
          again.className = "primary";
          again.textContent = "Reload and save again";
          error.appendChild(document.createElement("br"));
          error.appendChild(again);
          again.addEventListener("click", async () => {
            try {
              const fresh = await api(`api/interviews/${encodeURIComponent(what.stem)}`);
              what.version = fresh.version;
              if (state.interview && state.interview.stem === what.stem) {
                state.interview.version = fresh.version;
                state.interview.highlights = fresh.highlights;
                renderHighlights();
              }
              const result = await send(fresh.version);
              closePopover();
              done(result);
            } catch (err2) { error.textContent = err2.message; }
          });
        }
      }
    });
    place(box, rect);
    input.focus();
  }

  // For the browser tests and anyone curious: the player and what is marked.
  window.igot = {
    player: () => state.player,
    now: () => state.now,
    interview: () => state.interview,
    phraseAt: (t) => phraseAt(t),
    ready: () => Boolean(state.player),
    board: () => state.board,
  };

  window.addEventListener("hashchange", route);
  route();
})();
