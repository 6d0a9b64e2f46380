// A stand-in for https://www.youtube.com/iframe_api, which cannot load here (no internet): the
// same calls the workspace's player makes (YT.Player with onReady, playVideo, pauseVideo, seekTo,
// getCurrentTime, getPlayerState, YT.PlayerState), with a clock instead of a video. Every call is
// kept in window.fakeYouTube.calls for the test to read. Only the browser tests load it.
"use strict";
(function () {
  const PlayerState = { UNSTARTED: -1, ENDED: 0, PLAYING: 1, PAUSED: 2, BUFFERING: 3, CUED: 5 };
  class Player {
    constructor(where, options) {
      const node = typeof where === "string" ? document.getElementById(where) : where;
      const box = document.createElement("div");
      box.className = "fake-youtube";
      box.textContent = `YouTube player stand-in: ${options.videoId}`;
      Object.assign(box.style, { color: "#fff", display: "grid", placeItems: "center", fontSize: "15px" });
      node.replaceWith(box);
      this.options = options;
      this.calls = [];
      this.at = 0;
      this.since = null;
      window.fakeYouTube = this;
      setTimeout(() => options.events.onReady({ target: this }), 20);
    }
    now() { return this.since === null ? this.at : this.at + (performance.now() - this.since) / 1000; }
    playVideo() { this.calls.push(["playVideo"]); if (this.since === null) this.since = performance.now(); }
    pauseVideo() { this.calls.push(["pauseVideo"]); this.at = this.now(); this.since = null; }
    seekTo(seconds, allowSeekAhead) {
      this.calls.push(["seekTo", seconds, allowSeekAhead]);
      this.at = seconds;
      if (this.since !== null) this.since = performance.now();
    }
    getCurrentTime() { return this.now(); }
    getPlayerState() { return this.since === null ? PlayerState.PAUSED : PlayerState.PLAYING; }
  }
  window.YT = { Player, PlayerState, loaded: 1 };
  if (typeof window.onYouTubeIframeAPIReady === "function") window.onYouTubeIframeAPIReady();
})();
