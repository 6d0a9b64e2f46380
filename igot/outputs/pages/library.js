// The search. Same rules as igot.search.words.search: every text normalised once at load into one
// string, one line per phrase; a query word is found with indexOf(" word") (a word start), which
// V8 runs over tens of megabytes in milliseconds, and the phrase it lands in is found by binary
// search over where each line starts. The search state lives in the address (#q=…&speaker=…).
(() => {
'use strict';
const LIB = JSON.parse(document.getElementById('library-data').textContent).interviews;
const PAGE_SIZE = 100;
const MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const PUNCTUATION = /[^\p{L}\p{N}\n ]+/gu;  // only runs that are not already single spaces: far fewer replacements
const norm = s => s.normalize('NFD').replace(MARKS, '').toLowerCase().replace(PUNCTUATION, ' ').replace(/\s+/g, ' ').trim();

// One structure that search reads and hits are shown from: phrase k of the whole library is
// texts[k], phrase local[k] of interview owner[k], and line k of the haystack. An interview with
// no phrases adds nothing to any of them, so it can shift no other interview's hits.
const t0 = performance.now();
const texts = [], ownerOf = [], localOf = [];
LIB.forEach((iv, i) => {
  const lines = iv.t.length ? iv.x.split('\n') : [];
  if (lines.length !== iv.t.length || iv.s.length !== iv.t.length) {  // never written so; left out rather than misread
    console.error(`iGot library: the data of "${iv.name}" is inconsistent; it is not searched.`);
    iv.t = iv.s = [];
    return;
  }
  for (let j = 0; j < lines.length; j++) { texts.push(lines[j]); ownerOf.push(i); localOf.push(j); }
  iv.speakerKeys = iv.speakers.map(n => ' ' + norm(n) + ' ');
  iv.nameKey = norm(iv.name);
});
const total = texts.length;
const owner = Int32Array.from(ownerOf), local = Int32Array.from(localOf);
// The haystack, " words of phrase one \n words of phrase two \n…": built with a few whole-string
// operations (per-phrase strings cost seconds at 300,000 phrases); none adds or drops a newline.
const all = texts.join('\n').normalize('NFD').replace(MARKS, '').toLowerCase()
  .replace(PUNCTUATION, ' ').replace(/  +/g, ' ').replace(/ ?\n ?/g, '\n').replace(/^ | $/g, '');
const hay = ' ' + all.replaceAll('\n', ' \n ') + ' ';
const starts = new Int32Array(total + 1);  // where line k starts in hay
let newlines = 0;
for (let at = hay.indexOf('\n'); at >= 0; at = hay.indexOf('\n', at + 1)) if (++newlines < total) starts[newlines] = at + 1;
if (total && newlines !== total - 1) throw new Error(`iGot library: ${newlines + 1} lines for ${total} phrases`);
starts[total] = hay.length + 1;
window.igotIndexMs = performance.now() - t0;

function parseQuery(text) {
  const phrases = [];
  const rest = text.replace(/["“”«»„]([^"“”«»„]*)["“”«»„]?/g, (_, p) => { const n = norm(p); if (n) phrases.push(n); return ' '; });
  const words = [...new Set(norm(rest).split(' ').filter(Boolean))];
  return {words, phrases};
}

function phraseAt(offset) {  // the last phrase starting at or before offset
  let lo = 0, hi = total - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= offset) lo = mid; else hi = mid - 1; }
  return lo;
}

function search(text, filter) {
  const q = parseQuery(text);
  if (!q.words.length && !q.phrases.length) return [];
  const fi = filter.interview ? norm(filter.interview) : '';
  const fs = filter.speaker ? norm(filter.speaker) : '';
  const fl = filter.language || '';
  // Per interview, which speakers' names a query word starts a word of.
  const bySpeaker = q.words.map(w => LIB.map(iv => iv.t.length ? iv.speakerKeys.map(n => n.includes(' ' + w)) : []));
  const needles = q.words.map(w => ' ' + w).concat(q.phrases.map(p => ' ' + p + ' '));
  const ok = k => {
    const i = owner[k], iv = LIB[i];
    if (fi && !iv.nameKey.includes(fi)) return false;
    if (fl && iv.language !== fl) return false;
    const s = iv.s[local[k]];
    if (fs && !iv.speakerKeys[s].includes(fs)) return false;
    const line = hay.slice(starts[k], starts[k + 1] - 1);
    for (let n = 0; n < needles.length; n++) {
      if (!line.includes(needles[n]) && !(n < q.words.length && bySpeaker[n][i][s])) return false;
    }
    return true;
  };
  // Drive the scan with the longest needle that only text can match; with none (a speaker's
  // name alone), look at every phrase.
  let drive = -1;
  needles.forEach((n, i) => {
    const nameToo = i < q.words.length && bySpeaker[i].some(a => a.some(Boolean));
    if (!nameToo && (drive < 0 || n.length > needles[drive].length)) drive = i;
  });
  const found = [];
  if (drive < 0) {
    for (let k = 0; k < total; k++) if (ok(k)) found.push(k);
    return found;
  }
  const needle = needles[drive];
  let at = hay.indexOf(needle);
  while (at >= 0) {
    const k = phraseAt(at);
    if (ok(k)) found.push(k);
    at = hay.indexOf(needle, starts[k + 1]);
  }
  return found;
}

// Highlight: normalise the phrase character by character, remembering where each came from.
function marks(text, q) {
  let out = '', where = [];
  for (let i = 0; i < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(i));
    const piece = ch.normalize('NFD').replace(MARKS, '') ? (norm(ch) || ' ') : '';  // a lone accent: dropped
    for (const c of piece) {
      if (c === ' ' && (!out || out.endsWith(' '))) continue;
      out += c; where.push(i);
    }
    i += ch.length;
  }
  if (out.endsWith(' ')) { out = out.slice(0, -1); where.pop(); }
  const h = ' ' + out + ' ', spans = [];
  const add = (needle, whole) => {
    for (let at = h.indexOf(' ' + needle); at >= 0; at = h.indexOf(' ' + needle, at + 1)) {
      const end = at + 1 + needle.length;
      if (whole && h[end] !== ' ') continue;
      const last = where[end - 2];
      spans.push([where[at], last + String.fromCodePoint(text.codePointAt(last)).length]);
    }
  };
  q.words.forEach(w => add(w, false));
  q.phrases.forEach(p => add(p, true));
  spans.sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const s of spans) {
    if (merged.length && s[0] <= merged[merged.length - 1][1]) merged[merged.length - 1][1] = Math.max(s[1], merged[merged.length - 1][1]);
    else merged.push(s);
  }
  return merged;
}

const esc = s => s.replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
const clock = s => {
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return (h ? h + ':' + String(m).padStart(2, '0') : String(m)) + ':' + String(sec).padStart(2, '0');
};
const $ = id => document.getElementById(id);

function hitHtml(k, q) {
  const iv = LIB[owner[k]], j = local[k], text = texts[k], sec = iv.t[j];
  let shown = '', last = 0;
  for (const [a, b] of marks(text, q)) { shown += esc(text.slice(last, a)) + '<mark>' + esc(text.slice(a, b)) + '</mark>'; last = b; }
  shown += esc(text.slice(last));
  const who = iv.speakers[iv.s[j]];
  const video = iv.link ? `<a class="video" href="${esc(iv.link[0] + sec + iv.link[1])}" target="_blank" rel="noopener">video at ${clock(sec)}</a>` : '';
  return `<li class="hit"><div class="where"><b>${esc(iv.name)}</b> · <span class="time">${clock(sec)}</span>` +
    (who ? ` · <span class="who">${esc(who)}</span>` : '') + `</div><p class="text">${shown}</p>` +
    `<div class="where">${video}${video ? ' · ' : ''}<a class="page" href="${esc(iv.page + '#p-' + j)}">in the transcript</a></div></li>`;
}

let current = [], shownCount = 0, currentQuery = null;
function showMore() {
  const next = current.slice(shownCount, shownCount + PAGE_SIZE);
  $('hits').insertAdjacentHTML('beforeend', next.map(k => hitHtml(k, currentQuery)).join(''));
  shownCount += next.length;
  $('more').hidden = shownCount >= current.length;
}

// The search in the address, index.html#q=pix+"não+confiava"&speaker=Ana: a search can be
// bookmarked and sent, and the back button goes back to the search before.
const FIELDS = ['q', 'interview', 'speaker', 'language'];
const state = () => ({q: $('q').value, interview: $('interview').value, speaker: $('speaker').value, language: $('language').value});
function fromAddress() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  return Object.fromEntries(FIELDS.map(f => [f, p.get(f) || '']));
}
function address(s) {
  const p = new URLSearchParams();
  for (const f of FIELDS) if (s[f]) p.set(f, s[f]);
  const h = p.toString();
  return location.href.split('#')[0] + (h ? '#' + h : '');
}
let typedAt = -Infinity;
function remember(typing) {
  const url = address(state());
  if (url === location.href) return;
  // One history entry per search typed, not one per letter: a pause of 1.5 s starts the next.
  const now = performance.now(), same = typing && now - typedAt < 1500;
  if (typing) typedAt = now;
  history[same ? 'replaceState' : 'pushState'](null, '', url);
}
function choose(id, value) {  // a name from a sent link may not be in this library's list: add it
  const select = $(id);
  if (value && ![...select.options].some(o => o.value === value)) options(id, [[value, value]]);
  select.value = value;
}
function show(s) {
  $('q').value = s.q;
  for (const f of FIELDS.slice(1)) choose(f, s[f]);
  return run('address');
}

function run(how) {
  const text = $('q').value;
  const filter = {interview: $('interview').value, speaker: $('speaker').value, language: $('language').value};
  if (how !== 'address') remember(how === 'typing');
  const t = performance.now();
  current = search(text, filter);
  const ms = performance.now() - t;
  currentQuery = parseQuery(text);
  $('hits').innerHTML = '';
  shownCount = 0;
  const any = currentQuery.words.length || currentQuery.phrases.length;
  $('results').hidden = !any;
  if (!any) return {count: 0, ms};
  showMore();
  const n = current.length, ivs = new Set(current.map(k => owner[k])).size;
  $('status').textContent = n ? `${n} phrase${n === 1 ? '' : 's'} in ${ivs} interview${ivs === 1 ? '' : 's'}` : 'No phrase matches.';
  window.igotLast = {count: n, ms};
  return window.igotLast;
}

// Filters, from the data.
function options(id, values) {
  for (const [v, label] of values) $(id).insertAdjacentHTML('beforeend', `<option value="${esc(String(v))}">${esc(label)}</option>`);
}
options('interview', [...new Set(LIB.map(iv => iv.name))].map(n => [n, n]));
options('speaker', [...new Set(LIB.flatMap(iv => iv.spoken))].sort((a, b) => a.localeCompare(b)).map(n => [n, n]));
options('language', [...new Set(LIB.map(iv => iv.language).filter(Boolean))].sort().map(l => [l, l]));

let timer = 0;
$('q').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => run('typing'), 120); });
for (const id of FIELDS.slice(1)) $(id).addEventListener('change', () => run('filter'));
$('more').addEventListener('click', showMore);
// Back, forward, or an address typed or followed: show the search it holds.
const follow = () => { const s = fromAddress(); if (FIELDS.some(f => s[f] !== state()[f])) show(s); };
window.addEventListener('popstate', follow);
window.addEventListener('hashchange', follow);
window.igotSearch = (text, filter) => search(text, Object.assign({interview: '', speaker: '', language: ''}, filter || {})).length;
window.igotRun = run;
if (FIELDS.some(f => fromAddress()[f])) show(fromAddress());
else if ($('q').value) run('address');  // the browser kept a query typed before the address held it
})();
