// A stand-in for https://player.vimeo.com/api/player.js, which cannot load here (no internet):
// Vimeo.Player with the calls the workspace makes (ready, on, play, pause, setCurrentTime,
// getCurrentTime: promises, as Vimeo's are) and its events (play, pause, seeked, timeupdate
// every 250 ms while playing), with a clock instead of a video. Calls are kept in
// window.fakeVimeo.calls. Only the browser tests load it.
"use strict";
(function () {
  class Player {
    constructor(where, options) {
      const box = document.createElement("div");
      box.className = "fake-vimeo";
      box.textContent = `Vimeo player stand-in: ${options.url}`;
      Object.assign(box.style, { color: "#fff", display: "grid", placeItems: "center", fontSize: "15px" });
      where.replaceWith(box);
      this.calls = [];
      this.handlers = {};
      this.at = 0;
      this.since = null;
      window.fakeVimeo = this;
      setInterval(() => { if (this.since !== null) this.emit("timeupdate", { seconds: this.now() }); }, 250);
    }
    now() { return this.since === null ? this.at : this.at + (performance.now() - this.since) / 1000; }
    emit(name, data) { (this.handlers[name] || []).forEach((f) => f(data)); }
    on(name, handler) { (this.handlers[name] = this.handlers[name] || []).push(handler); }
    ready() { return Promise.resolve(); }
    play() { this.calls.push(["play"]); if (this.since === null) this.since = performance.now(); this.emit("play", { seconds: this.now() }); return Promise.resolve(); }
    pause() { this.calls.push(["pause"]); this.at = this.now(); this.since = null; this.emit("pause", { seconds: this.at }); return Promise.resolve(); }
    setCurrentTime(seconds) {
      this.calls.push(["setCurrentTime", seconds]);
      this.at = seconds;
      if (this.since !== null) this.since = performance.now();
      setTimeout(() => this.emit("seeked", { seconds }), 5);
      return Promise.resolve(seconds);
    }
    getCurrentTime() { return Promise.resolve(this.now()); }
  }
  window.Vimeo = { Player };
})();
