// What the views share while the page is open, in one object rather than globals; every field is
// set back by the router (app.js) when the address changes.
export const state = {
  interview: null,   // the interview playing (its page's, or the quote pane's), as api/interviews/... sent it
  player: null,      // its player (player.js), once loaded
  now: -1,           // the phrase marked as being said
  clipEnd: null,     // where a quote played from a list stops
  timer: null,       // the clock that moves the mark along
  tags: [],          // every tag in the library, to suggest
  colours: 0,        // how many speaker colours and border styles the CSS has (from the server)
  borders: 0,
  pane: null,        // the quote pane of a list page, if any
  phraseEls: null,   // the interview page's transcript: one element per phrase
  order: null,       // its phrases' indices in time order
  shown: 0,          // counts pages shown: an answer that comes after the user moved on is dropped
  board: null,       // the themes board shown
  linked: null,      // the highlight an interview's address names (?h=ID), marked where it shows
};

// The router, registered by app.js: a view that must draw itself again calls reload() (no import
// of app.js, which imports every view).
let router = () => Promise.resolve();
export function setRouter(fn) { router = fn; }
export function reload() { return router(); }
