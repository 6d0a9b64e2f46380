// One small player interface over the three ways an interview plays: the browser's own <video>
// or <audio> (a recording served by the workspace, seekable through HTTP range requests), the
// YouTube IFrame Player API and the Vimeo Player API. The page only ever calls:
//   play(), pause(), toggle(), seek(seconds), time() -> seconds, paused() -> bool
// time() is answered at once (YouTube's getCurrentTime is synchronous; Vimeo's is a promise, so
// its last 'timeupdate' is kept and moved on by the clock while it plays).
// An ES module: createPlayer() is its one export.
const scripts = {};

function loadScript(src) {
  if (!scripts[src]) {
    scripts[src] = new Promise((resolve, reject) => {
      const tag = document.createElement("script");
      tag.src = src;
      tag.async = true;
      tag.onload = resolve;
      tag.onerror = () => reject(new Error("Could not load " + src + " (offline, or blocked?)"));
      document.head.appendChild(tag);
    });
  }
  return scripts[src];
}

function html5(box, spec) {
  const media = document.createElement(spec.kind === "audio" ? "audio" : "video");
  media.controls = true;
  media.preload = "metadata";
  media.playsInline = true;
  media.src = spec.src;
  box.appendChild(media);
  return Promise.resolve({
    kind: spec.kind,
    element: media,
    play: () => media.play(),
    pause: () => media.pause(),
    toggle() { return media.paused ? media.play() : media.pause(); },
    seek(t) { media.currentTime = Math.max(0, t); },
    time: () => media.currentTime,
    paused: () => media.paused,
  });
}

function youtube(box, spec) {
  const ready = new Promise((resolve, reject) => {
    if (window.YT && window.YT.Player) return resolve();
    const before = window.onYouTubeIframeAPIReady;
    window.onYouTubeIframeAPIReady = () => { if (before) before(); resolve(); };
    loadScript("https://www.youtube.com/iframe_api").catch(reject);
  });
  return ready.then(() => new Promise((resolve) => {
    const slot = document.createElement("div");
    box.appendChild(slot);
    const yt = new YT.Player(slot, {
      videoId: spec.id,
      width: "100%",
      playerVars: { playsinline: 1, rel: 0, modestbranding: 1, origin: location.origin },
      events: {
        onReady() {
          resolve({
            kind: "youtube",
            element: box,
            play: () => yt.playVideo(),
            pause: () => yt.pauseVideo(),
            toggle() { return this.paused() ? yt.playVideo() : yt.pauseVideo(); },
            seek(t) { yt.seekTo(Math.max(0, t), true); },
            time: () => yt.getCurrentTime() || 0,
            paused: () => yt.getPlayerState() !== YT.PlayerState.PLAYING,
          });
        },
      },
    });
  }));
}

function vimeo(box, spec) {
  return loadScript("https://player.vimeo.com/api/player.js").then(() => {
    const slot = document.createElement("div");
    box.appendChild(slot);
    const player = new Vimeo.Player(slot, { url: spec.url, responsive: true });
    let last = 0, at = performance.now(), playing = false;
    const note = (seconds) => { last = seconds; at = performance.now(); };
    player.on("timeupdate", (d) => note(d.seconds));
    player.on("seeked", (d) => note(d.seconds));
    player.on("play", () => { playing = true; at = performance.now(); });
    player.on("pause", (d) => { playing = false; if (d) note(d.seconds); });
    player.on("ended", () => { playing = false; });
    return player.ready().then(() => ({
      kind: "vimeo",
      element: box,
      play: () => player.play(),
      pause: () => player.pause(),
      toggle() { return playing ? player.pause() : player.play(); },
      seek(t) { note(Math.max(0, t)); return player.setCurrentTime(Math.max(0, t)); },
      time: () => last + (playing ? (performance.now() - at) / 1000 : 0),
      paused: () => !playing,
    }));
  });
}

function none(box, spec) {
  const p = document.createElement("p");
  p.className = "no-player";
  p.textContent = "No recording to play here: the interview's video link and file are not available on this computer.";
  if (spec.url) {
    const a = document.createElement("a");
    a.href = spec.url;
    a.target = "_blank";
    a.rel = "noopener";
    a.textContent = " Open the video";
    p.appendChild(a);
  }
  box.appendChild(p);
  let t = 0;
  return Promise.resolve({
    kind: "none", element: box, play() {}, pause() {}, toggle() {},
    seek(s) { t = s; }, time: () => t, paused: () => true,
  });
}

// The player for `spec` (api/interviews/...'s "player") in `box`; one that cannot load says why
// in the box and plays nothing.
export function createPlayer(box, spec) {
  const make = { youtube, vimeo, video: html5, audio: html5 }[spec.kind] || none;
  return make(box, spec).catch((err) => {
    box.textContent = "";
    return none(box, { url: spec.url }).then((p) => {
      box.querySelector(".no-player").textContent = "The player could not load: " + err.message;
      return p;
    });
  });
}
