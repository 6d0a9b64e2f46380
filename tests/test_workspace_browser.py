"""The workspace in Debian's Chromium (Playwright), over a library of three dev interviews made by
the pipeline with the small offline models: a local video made from dev audio with ffmpeg, one
linked to YouTube, one Portuguese with its audio only (and a fourth, linked to Vimeo).

YouTube's and Vimeo's player scripts cannot load here (no internet): the tests answer their
addresses with local stand-ins that make the same calls (tests/data/workspace/fake_*.js), so
what is tested is the workspace's player code against those APIs, not the real players."""

from __future__ import annotations

import hashlib
from html import escape
import json
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import store
from igot.pipeline import RunOptions, run
from igot.transcript import Source, Transcript
from igot.workspace import server

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
FAKES = Path(__file__).resolve().parent / "data" / "workspace"
YOUTUBE = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
VIMEO = "https://vimeo.com/76979871"


@pytest.fixture(scope="module")
def folder(devdata, models, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("workspace")
    video = out / "falcon-call.webm"  # a local video: a still picture over the dev audio
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=0x23405f:s=320x180:r=5",
                    "-i", str(devdata / "picovoice_falcon/test.flac"), "-shortest", "-c:v", "libvpx", "-b:v", "60k",
                    "-c:a", "libopus", "-b:a", "32k", str(video)], check=True)
    common = dict(word_timing="engine", punctuate=False, summary=False, progress=False, voices=False)
    runs = [
        (video, RunOptions(name="Falcon test call", model="bundled:tiny.en", language="en", **common)),
        (devdata / "pyaudioanalysis/diarizationExample.flac",
         RunOptions(name="Radio phone-in", model="bundled:tiny.en", language="en", speakers=4, video_url=YOUTUBE,
                    names=["Host", "Brian", "Sandra", "Expert"], **common)),
        (devdata / "falabrasil_pt/ufpalign_falabrasil.flac",
         RunOptions(name="Entrevista — alinhamento", model="bundled:base", language="pt", speakers=1,
                    names=["Joana Conceição"], **common)),
    ]
    for path, options in runs:
        run(str(path), out, options, models=models, log=lambda m: None)
    falcon = Transcript.load(out / "falcon-test-call.json")
    store.save(replace(falcon, source=Source("Vimeo copy", VIMEO, None, "vimeo")), out, "vimeo-copy", drive=False)
    (out.parent / "secret.txt").write_text("not yours")
    return out


@pytest.fixture(scope="module")
def workspace(folder):
    running = server.start(folder)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from igot_dev.browser import Browser

    b = Browser(tmp_path_factory.mktemp("chromium"))
    b.context.route("https://www.youtube.com/iframe_api",
                    lambda route: route.fulfill(path=FAKES / "fake_youtube_iframe_api.js", content_type="text/javascript"))
    b.context.route("https://player.vimeo.com/api/player.js",
                    lambda route: route.fulfill(path=FAKES / "fake_vimeo_player.js", content_type="text/javascript"))
    yield b
    b.close()


def open_interview(browser, workspace, stem: str):
    page = browser.open(f"{workspace.url}#/interview/{stem}")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    wait_for(page, "window.igot && igot.ready()")
    page.errors = errors
    return page


def wait_for(page, expression: str, timeout: float = 15.0) -> None:
    """Poll `expression` in the page until it is true. (Playwright's wait_for_function evaluates
    its string with eval(), which the workspace's Content-Security-Policy rightly forbids.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        time.sleep(0.05)


def phrases(folder: Path, stem: str):
    return Transcript.load(folder / f"{stem}.json").phrases


def spoken(folder: Path, stem: str) -> list[int]:
    return [i for i, p in enumerate(phrases(folder, stem)) if p.text.strip()]


def drag_select(page, first: str, last: str) -> None:
    """Select text with the mouse, from the start of `first` to the end of `last` (selectors)."""
    page.bring_to_front()  # a tab in the background is drawn late (throttled)
    a = page.locator(first).bounding_box()
    b = page.locator(last).bounding_box()
    page.mouse.move(a["x"] + 1, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] - 1, b["y"] + b["height"] / 2, steps=6)
    page.mouse.up()


def highlight(page, tag: str, note: str = "") -> None:
    page.locator(".popover.offer").click()
    page.locator(".form-pop .tag-input").fill(tag)
    page.keyboard.press("Enter")
    if note:
        page.locator(".form-pop .note").fill(note)
    with page.expect_response(lambda r: "/highlights" in r.url and r.request.method == "POST") as answer:
        page.locator(".form-pop button[type=submit]").click()
    assert answer.value.status == 201, answer.value.text()


def files_of(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


# --- watching -----------------------------------------------------------------------------------
def test_a_click_on_a_phrase_seeks_the_local_video_and_the_mark_follows_playback(browser, workspace, folder):
    page = open_interview(browser, workspace, "falcon-test-call")
    ps = phrases(folder, "falcon-test-call")
    assert page.evaluate("igot.player().kind") == "video"
    src = page.evaluate("document.querySelector('video').src")
    assert src.split("?")[0].endswith("/media/falcon-test-call") and "token=" in src  # the page's own request
    third = spoken(folder, "falcon-test-call")[2]
    page.locator(f'.phrase[data-i="{third}"]').click()
    wait_for(page, "document.querySelector('video').readyState >= 1")
    assert abs(page.evaluate("igot.player().time()") - ps[third].start) <= 0.3
    assert page.evaluate("document.querySelector('.phrase.now').dataset.i") == str(third)
    # Copy link: that moment, an address of this page with no key in it, opens here while the workspace runs.
    page.locator(".moment-link .copy-link").click()
    link = page.locator(".moment-link .copy-link").get_attribute("data-copied")
    assert link.startswith(f"{workspace.url}#/interview/falcon-test-call?t=") and workspace.token not in link
    there = browser.open(link)
    wait_for(there, f"igot.ready() && igot.now() === {third}")
    assert abs(there.evaluate("igot.player().time()") - ps[third].start) <= 0.3
    there.close()

    # Play (Space): the marked phrase follows the video as it plays.
    page.locator("#transcript").click(position={"x": 5, "y": 5})  # focus the page, not the player's controls
    page.keyboard.press("Space")
    wait_for(page, "!igot.player().paused() && igot.player().time() > 0")
    marked = set()
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and len(marked) < 3:
        now, t = page.evaluate("[Number(document.querySelector('.phrase.now').dataset.i), igot.player().time()]")
        p = ps[now]
        assert p.start - 0.3 <= t, (now, t)  # never marked ahead of the video
        marked.add(now)
        time.sleep(0.25)
    assert len(marked) >= 2, marked
    page.keyboard.press("Space")
    wait_for(page, "igot.player().paused()")
    # Arrow keys: phrase by phrase.
    here = int(page.evaluate("igot.now()"))
    page.keyboard.press("ArrowDown")
    after = int(page.evaluate("igot.now()"))
    assert after != here and abs(page.evaluate("igot.player().time()") - ps[after].start) <= 0.3
    page.keyboard.press("ArrowUp")
    assert int(page.evaluate("igot.now()")) == here
    assert page.errors == []
    page.close()


def test_the_youtube_and_vimeo_players_are_driven_through_their_apis(browser, workspace, folder):
    """Against the local stand-ins (see the module's docstring): the same calls the real APIs take."""
    page = open_interview(browser, workspace, "radio-phone-in")
    assert page.evaluate("igot.player().kind") == "youtube"
    assert page.evaluate("fakeYouTube.options.videoId") == "dQw4w9WgXcQ"
    ps = phrases(folder, "radio-phone-in")
    fifth = spoken(folder, "radio-phone-in")[4]
    page.locator(f'.phrase[data-i="{fifth}"]').click()
    assert page.evaluate("fakeYouTube.calls.at(-1)") == ["seekTo", ps[fifth].start, True]
    assert abs(page.evaluate("igot.player().time()") - ps[fifth].start) <= 0.3
    page.locator("#transcript").click(position={"x": 5, "y": 5})
    page.keyboard.press("Space")
    assert page.evaluate("fakeYouTube.calls.at(-1)") == ["playVideo"]
    page.wait_for_timeout(1200)
    now, t = page.evaluate("[igot.now(), igot.player().time()]")
    assert t > ps[fifth].start + 0.8
    # The mark follows the fake's clock (the page looks every 0.1 s).
    assert now in (page.evaluate(f"igot.phraseAt({t})"), page.evaluate(f"igot.phraseAt({t - 0.25})"))
    assert ps[now].start <= t + 0.3
    page.keyboard.press("Space")
    assert page.evaluate("fakeYouTube.calls.at(-1)") == ["pauseVideo"]
    page.close()

    page = open_interview(browser, workspace, "vimeo-copy")
    assert page.evaluate("igot.player().kind") == "vimeo"
    vps = phrases(folder, "vimeo-copy")
    second = spoken(folder, "vimeo-copy")[1]
    page.locator(f'.phrase[data-i="{second}"]').click()
    assert page.evaluate("fakeVimeo.calls.at(-1)") == ["setCurrentTime", vps[second].start]
    assert abs(page.evaluate("igot.player().time()") - vps[second].start) <= 0.3
    page.locator("#transcript").click(position={"x": 5, "y": 5})
    page.keyboard.press("Space")
    page.wait_for_timeout(800)
    assert page.evaluate("fakeVimeo.calls.at(-1)") == ["play"] and page.evaluate("igot.player().time()") > vps[second].start + 0.5
    page.close()


# --- highlighting ---------------------------------------------------------------------------------
def test_highlights_made_with_the_mouse_reach_the_board_the_files_and_survive_a_reload(browser, workspace, folder):
    stem = "radio-phone-in"
    page = open_interview(browser, workspace, stem)
    ps = phrases(folder, stem)
    said = spoken(folder, stem)
    a = next(i for i in said if i + 1 in said and len(ps[i].words) >= 3 and len(ps[i + 1].words) >= 3)
    b = a + 1
    # Two phrases, "pricing".
    drag_select(page, f'.phrase[data-i="{a}"] .w >> nth=0', f'.phrase[data-i="{b}"] .w >> nth=-1')
    highlight(page, "pricing", note="they compare prices")
    # Three words inside a phrase, "onboarding".
    # A phrase whose words 1 to 3 are told apart by their times from words 0 and 4 (tiny.en can
    # time a word with no length at its neighbour's start: a selection by time then takes both).
    def apart(ws) -> bool:
        middle = [(w.start + w.end) / 2 for w in ws]
        return middle[0] < ws[1].start - 2e-3 and middle[4] > ws[3].end + 2e-3

    c = next(i for i in said if i > b and len(ps[i].words) >= 5 and apart(ps[i].words))
    drag_select(page, f'.phrase[data-i="{c}"] .w[data-w="1"]', f'.phrase[data-i="{c}"] .w[data-w="3"]')
    highlight(page, "onboarding")
    assert page.locator(".hl-item").count() == 2 and page.errors == []

    saved = Transcript.load(folder / f"{stem}.json").highlights
    by_tag = {h.tags[0]: h for h in saved}
    assert by_tag["pricing"].quote == f"{ps[a].text.strip()} {ps[b].text.strip()}"
    assert (by_tag["pricing"].start, by_tag["pricing"].end) == (pytest.approx(ps[a].words[0].start, abs=1e-3),
                                                                 pytest.approx(ps[b].words[-1].end, abs=1e-3))
    three = " ".join(w.text.strip() for w in ps[c].words[1:4])
    assert by_tag["onboarding"].quote == three and by_tag["onboarding"].speaker == ps[c].speaker
    # The page marks exactly those words.
    assert page.evaluate(f"[...document.querySelectorAll('.phrase[data-i=\"{c}\"] .w.hl')].map(w => w.textContent).join(' ')") == three

    # The exports carry them: JSON (above), HTML and Markdown.
    html = (folder / f"{stem}.html").read_text()
    assert '<h3>pricing <span class="count">1</span></h3>' in html and f'title="onboarding">{escape(three)}</mark>' in html
    md = (folder / f"{stem}.md").read_text()
    assert "### pricing (1)" in md and f"**{three}**" in md and "_they compare prices_" in md

    # The board: pricing, 1 highlight in 1 interview.
    page.goto(f"{workspace.url}#/tags")
    row = page.locator('tr[data-tag="pricing"]')
    assert [row.locator(f".{k}").text_content() for k in ("highlights", "interviews", "people")] == ["1", "1", "1"]
    # Reload: still there, still marked.
    page.reload()
    assert page.locator('tr[data-tag="pricing"] .highlights').text_content() == "1"
    page.goto(f"{workspace.url}#/interview/{stem}")
    wait_for(page, "window.igot && igot.ready()")
    assert page.locator(".hl-item").count() == 2
    assert page.evaluate(f"document.querySelectorAll('.phrase[data-i=\"{a}\"] .w.hl').length") == len(ps[a].words)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(f'.phrase[data-i="{c}"]').click()
    page.wait_for_timeout(300)
    (ARTIFACTS / "workspace-interview.png").write_bytes(page.screenshot())

    # The tag's page lists the quote, playable in place; edit the note, then the search filter by tag.
    page.goto(f"{workspace.url}#/tag/pricing")
    page.locator(".quote").wait_for()
    assert page.locator(".quote blockquote").text_content() == by_tag["pricing"].quote
    page.locator(".quote button.play").click()
    wait_for(page, "window.fakeYouTube && fakeYouTube.calls.some(c => c[0] === 'playVideo')")
    assert abs(page.evaluate("fakeYouTube.getCurrentTime()") - by_tag["pricing"].start) < 0.5
    (ARTIFACTS / "workspace-tag.png").write_bytes(page.screenshot())
    page.close()


def test_a_tag_renamed_on_the_board_changes_every_interview(browser, workspace, folder):
    page = browser.open(f"{workspace.url}#/interview/falcon-test-call")
    wait_for(page, "window.igot && igot.ready()")
    first = spoken(folder, "falcon-test-call")[0]
    drag_select(page, f'.phrase[data-i="{first}"] .w >> nth=0', f'.phrase[data-i="{first}"] .w >> nth=-1')
    highlight(page, "Pricing")  # the same tag, typed another way
    page.goto(f"{workspace.url}#/tags")
    assert page.locator('tr[data-tag="pricing"] .interviews').text_content() == "2"
    page.locator('tr[data-tag="pricing"] button.rename').click()
    page.locator(".rename-form input").fill("price")
    with page.expect_response(lambda r: r.url.endswith("/api/tags/rename")) as answer:
        page.locator(".rename-form button[type=submit]").click()
    assert answer.value.status == 200
    page.locator('tr[data-tag="price"]').wait_for()
    assert page.locator('tr[data-tag="pricing"]').count() == 0
    for stem in ("radio-phone-in", "falcon-test-call"):
        tags = [t for h in Transcript.load(folder / f"{stem}.json").highlights for t in h.tags]
        assert "price" in tags and not {"pricing", "Pricing"} & set(tags)
        assert "### price (1)" in (folder / f"{stem}.md").read_text()
    page.close()


def test_two_tabs_one_stale_lose_nothing(browser, workspace, folder):
    stem = "entrevista-alinhamento"
    one, two = open_interview(browser, workspace, stem), open_interview(browser, workspace, stem)
    ids = spoken(folder, stem)
    drag_select(one, f'.phrase[data-i="{ids[0]}"] .w >> nth=0', f'.phrase[data-i="{ids[0]}"] .w >> nth=1')
    highlight(one, "first tab")
    # The second tab still has the version before: its highlight touches nothing the first changed,
    # so it is kept beside the first's, and the tab reads the interview again to show both.
    drag_select(two, f'.phrase[data-i="{ids[-1]}"] .w >> nth=-2', f'.phrase[data-i="{ids[-1]}"] .w >> nth=-1')
    two.locator(".popover.offer").click()
    two.locator(".form-pop .tag-input").fill("second tab")
    two.keyboard.press("Enter")
    with two.expect_response(lambda r: "/highlights" in r.url and r.request.method == "POST") as answer:
        two.locator(".form-pop button[type=submit]").click()
    assert answer.value.status == 201
    assert sorted(h.tags[0] for h in Transcript.load(folder / f"{stem}.json").highlights) == ["first tab", "second tab"]
    wait_for(two, "document.querySelectorAll('.hl-item').length === 2")
    one.close()
    two.close()


# --- the door, as an attacker's page meets it -----------------------------------------------------------
def test_a_page_from_another_origin_can_neither_read_nor_change_the_library(browser, workspace, folder, tmp_path):
    from tests.webserver import serve

    (tmp_path / "evil.html").write_text("<!doctype html><title>evil</title><p>hello</p>")
    before = files_of(folder)
    with serve(tmp_path) as evil:
        page = browser.open(f"{evil}/evil.html")
        target = workspace.url
        results = page.evaluate("""async (target) => {
          const out = {};
          try { const r = await fetch(target + 'api/library'); out.read = r.status; }
          catch (e) { out.read = 'blocked'; }
          // A "simple" request, which the browser sends without asking first: text/plain, no-cors.
          const body = JSON.stringify({version: 'x', start: 0, end: 3, tags: ['evil']});
          const sent = await fetch(target + 'api/interviews/radio-phone-in/highlights',
                                   {method: 'POST', mode: 'no-cors', body, headers: {'Content-Type': 'text/plain'}});
          out.sent = sent.type;
          await fetch(target + 'api/tags/rename', {method: 'POST', mode: 'no-cors', body: JSON.stringify({old: 'price', new: 'evil'}),
                                                   headers: {'Content-Type': 'text/plain'}});
          // A form posted at the workspace.
          const frame = document.createElement('iframe'); frame.name = 'sink'; document.body.appendChild(frame);
          const form = document.createElement('form');
          form.method = 'POST'; form.action = target + 'api/tags/rename'; form.target = 'sink';
          form.enctype = 'text/plain';
          const field = document.createElement('input'); field.name = '{"old":"price","new":"evil","x":"'; field.value = '"}';
          form.appendChild(field); document.body.appendChild(form); form.submit();
          await new Promise(r => setTimeout(r, 800));
          return out;
        }""", target)
        assert results["read"] == "blocked"  # no CORS: the browser gives the page nothing
        page.close()
    assert files_of(folder) == before
    # What the server answered to those requests: refused, one line.
    page = browser.open(f"{workspace.url}#/")
    answer = page.evaluate("""async () => {
      const token = document.querySelector('meta[name="igot-token"]').content;
      return [(await fetch('api/library', {headers: {'X-iGot-Token': token}})).status, (await fetch('api/library')).status]; }""")
    assert answer == [200, 403]  # the page's own request carries its token; one without it is refused
    page.close()


def test_parent_paths_are_not_served_in_the_browser(browser, workspace):
    page = browser.context.new_page()
    for path in ("files/%2e%2e/secret.txt", "files/..%2fsecret.txt", "files/%2e%2e%2fsecret.txt"):
        for token in ("", f"?token={workspace.token}"):  # a link from elsewhere, and one the page made
            response = page.goto(workspace.url + path + token)
            assert response.status in (403, 404) and "not yours" not in page.content(), path
    page.close()


def test_search_finds_what_igot_search_finds_and_a_hit_is_highlighted_where_it_stands(browser, workspace, folder):
    from igot.outputs import library
    from igot.search.words import normalize, search

    interviews = library.load_interviews(folder)
    word = next(w for p in phrases(folder, "radio-phone-in") for w in normalize(p.text).split() if len(w) >= 5)
    want = search(interviews, word)
    page = browser.open(workspace.url)
    page.locator("#q").fill(word)
    page.keyboard.press("Enter")
    page.locator(".hit").first.wait_for()
    assert page.locator(".hit").count() == len(want)
    assert [t.strip() for t in page.locator(".hit .text").all_text_contents()] == [h.text for h in want]
    # No meaning index here: found by words, and one line says what meaning search needs.
    assert "igot index" in page.locator(".meaning-line").text_content() and page.locator(".meaning-line").is_visible()
    # Kept to one interview, then a hit highlighted from the list.
    page.locator("select[name=interview]").select_option("radio-phone-in")
    wait_for(page, f"document.querySelectorAll('.hit').length === {len([h for h in want if h.interview == 'Radio phone-in'])}")
    before = len(Transcript.load(folder / "radio-phone-in.json").highlights or [])
    page.locator(".hit button.highlight-hit").first.click()
    page.locator(".form-pop .tag-input").fill("from search")
    page.keyboard.press("Enter")
    with page.expect_response(lambda r: "/highlights" in r.url and r.request.method == "POST") as answer:
        page.locator(".form-pop button[type=submit]").click()
    assert answer.value.status == 201
    saved = Transcript.load(folder / "radio-phone-in.json").highlights
    first = next(h for h in want if h.interview == "Radio phone-in")
    assert len(saved) == before + 1 and any(h.tags == ["from search"] and h.quote == first.text for h in saved)
    page.locator(".hit button.play").first.click()
    wait_for(page, "window.fakeYouTube && fakeYouTube.calls.some(c => c[0] === 'playVideo')")
    page.close()


def test_a_search_typed_while_the_library_still_loads_is_what_the_page_shows(browser, workspace, folder):
    """A slow machine: the user types in the search box before the page has drawn its first view,
    and the interviews' list answers after they have already searched. What they typed stays in
    the box, and the late list must not draw over the search's hits."""
    word = next(w for p in phrases(folder, "radio-phone-in") for w in p.text.split() if len(w) >= 5).strip(".,?!").lower()
    me, lists = [], []
    page = browser.context.new_page()
    page.route("**/api/me", lambda route: me.append(route))  # the page draws its first view after this answer
    page.route("**/api/library", lambda route: lists.append(route) if not lists else route.continue_())
    page.goto(workspace.url, wait_until="domcontentloaded")
    wait_for(page, "document.querySelector('#search-form') !== null")
    page.locator("#q").fill(word)  # typed while the page still loads
    while not me:
        page.wait_for_timeout(50)
    me[0].continue_()  # the first view (the library) starts now, its list held
    while not lists:
        page.wait_for_timeout(50)
    assert page.locator("#q").input_value() == word
    page.keyboard.press("Enter")
    page.locator(".hit").first.wait_for()
    lists[0].continue_()  # the first view's list arrives now, late
    page.wait_for_timeout(500)
    page.wait_for_load_state("networkidle")
    assert page.locator(".hit").count() >= 1 and page.locator("table.list").count() == 0
    page.close()


# --- search by meaning, Ask, Themes ------------------------------------------------------------------
def highlighted(t: Transcript, lines: dict[int, str]) -> Transcript:
    """`t` with phrase i highlighted and tagged lines[i]."""
    from igot.outputs import highlights

    for i, tag in lines.items():
        p = t.phrases[i]
        t = highlights.with_highlight(t, highlights.new_highlight(t, p.start, p.end, [tag]))
    return t


@pytest.fixture(scope="module")
def meaning_folder(folder, tmp_path_factory) -> Path:
    """The dev interviews (without the highlights other tests made), two written ones with
    highlights to group, all embedded by `igot index` with all-MiniLM-L6-v2's real weights."""
    from igot.cli import main
    from igot_dev.long_transcript import EN
    from tests.test_search_meaning import SAID, interview, minilm_path

    out = tmp_path_factory.mktemp("meaning")
    for path in sorted(folder.glob("*.json")):
        store.save(replace(Transcript.load(path), highlights=[]), out, path.stem, drive=False)
    ana = interview("Onboarding — Ana", ["Thanks for coming in today.", SAID, "Then my sister did it for me on her laptop.",
                                         *EN[3:9], "The price felt fair for what it does."], "en")
    store.save(highlighted(ana, {1: "onboarding", 4: "onboarding", 8: "pricing", 9: "pricing"}), out, "onboarding-ana", drive=False)
    carla = interview("Payments — Carla", [*EN[9:18], "I would pay more if it had budgets.", "The monthly fee is too expensive."],
                      "en", names=("Carla", "Bruno"))
    store.save(highlighted(carla, {5: "pricing", 9: "pricing", 10: "pricing", 4: "onboarding", 6: "security"}), out,
               "payments-carla", drive=False)
    assert main(["index", "--out", str(out), "--embedding-model", minilm_path()]) == 0
    return out


@pytest.fixture(scope="module")
def meaning_workspace(meaning_folder, smollm2):
    """The workspace over it, with SmolLM2 (real weights) for Ask's answers, short ones: seconds on CPU."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # Chromium wants a core too: two threads then run far slower (tests/test_summarize.py)
    running = server.start(meaning_folder, llm=smollm2, answer_tokens=120)
    yield running
    running.stop()
    torch.set_num_threads(threads)


def shot(page, name: str) -> None:
    """A screenshot to look at (test-artifacts/), the whole page."""
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_bytes(page.screenshot(full_page=True))


def test_search_by_meaning_finds_a_paraphrase_that_shares_no_word_with_its_phrase(browser, meaning_workspace, meaning_folder):
    from igot.search.words import normalize
    from tests.test_search_meaning import REMEMBERED, SAID, cli, minilm_path

    assert not set(normalize(REMEMBERED).split()) & set(normalize(SAID).split())
    page = browser.open(meaning_workspace.url)
    page.locator("#q").fill(REMEMBERED)
    page.keyboard.press("Enter")
    page.locator(".hit").first.wait_for()
    texts = [t.strip() for t in page.locator(".hit .text").all_text_contents()]
    assert SAID in texts[:3], texts
    hit = page.locator(".hit", has_text=SAID)
    assert hit.locator(".how").text_content() == "by meaning"
    assert page.locator(".meaning-line").is_hidden()  # every interview has its vectors: nothing to say
    # The same hits as `igot search`, in the same order.
    code, out, _ = cli("search", REMEMBERED, "--out", str(meaning_folder), "--embedding-model", minilm_path(), "--json")
    assert code == 0 and texts == [h["text"] for h in json.loads(out)]
    # Playable where it stands: the YouTube stand-in goes to its moment.
    hit.locator("button.play").click()
    wait_for(page, "window.fakeYouTube && fakeYouTube.calls.some(c => c[0] === 'playVideo')")
    assert abs(page.evaluate("fakeYouTube.getCurrentTime()") - 6.0) < 0.5
    shot(page, "workspace-search-meaning.png")
    # The filters hold for what meaning finds: one speaker's phrases only.
    page.locator("select[name=speaker]").select_option("Carla")
    wait_for(page, "document.querySelectorAll('.hit').length > 0 && "
                   "[...document.querySelectorAll('.hit')].every(h => h.querySelector('.who').textContent === 'Carla')")
    assert page.locator(".hit .how", has_text="by meaning").count() > 0
    page.close()


def real_phrase(folder: Path, stem: str, index: int, start: float) -> str:
    p = Transcript.load(folder / f"{stem}.json").phrases[index]
    assert p.text.strip() and p.start - 1e-3 <= start <= max(p.end, p.start) + 1e-3, (stem, index, start)
    return p.text


def test_ask_shows_the_phrases_that_answer_as_real_moments_and_the_llms_answer_checked(browser, meaning_workspace, meaning_folder):
    from igot.search.ask import summarize

    page = browser.open(f"{meaning_workspace.url}#/ask")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.locator(".ask-form textarea").fill("Why did people give up on signing up?")
    with page.expect_response(lambda r: "/api/ask?" in r.url) as found:
        page.locator(".ask-form button[type=submit]").click()
    assert found.value.status == 200
    page.locator(".phrases .hit").first.wait_for()
    # While the LLM writes, the page says so.
    assert page.locator(".answer .waiting .spinner").count() == 1
    phrases = page.evaluate("""[...document.querySelectorAll('.phrases .hit')].map(h => [h.dataset.stem, Number(h.dataset.phrase),
                               Number(h.dataset.start), h.querySelector('.text').textContent])""")
    assert phrases
    for stem, index, start, text in phrases:
        assert text.strip() == real_phrase(meaning_folder, stem, index, start).strip()
    assert "I gave up halfway through the forms" in [t for *_, t in phrases]
    # SmolLM2 (135M, on CPU) writes the answer; every moment it cites is real, every quote it
    # makes up is marked as not said.
    wait_for(page, "document.querySelector('.points, .answer .no-llm') !== null", timeout=180)
    assert page.locator(".answer .waiting").count() == 0
    shot(page, "workspace-ask.png")
    points = page.locator(".point").count()
    assert points >= 1, page.locator(".answer").text_content()
    cites = page.evaluate("[...document.querySelectorAll('.cite')].map(c => [c.dataset.stem, Number(c.dataset.start)])")
    transcripts = {p.stem: Transcript.load(p) for p in meaning_folder.glob("*.json")}
    for stem, start in cites:
        assert any(p.text.strip() and p.start - 1e-3 <= start <= max(p.end, p.start) + 1e-3 for p in transcripts[stem].phrases)
    for quote in page.locator(".unverified").all_text_contents():
        said = quote.removesuffix(": not said in these interviews").strip("“”")
        assert all(summarize.find_quote(t, said) is None for t in transcripts.values()), said
    # Narrowed by a tag: only phrases inside its highlights.
    narrowed = page.evaluate("async () => (await (await fetch('api/ask?q=' + encodeURIComponent('what about money?') + '&tag=pricing', "
                             "{headers: {'X-iGot-Token': document.querySelector('meta[name=\"igot-token\"]').content}})).json()).phrases")
    tagged = {(stem, i) for stem, t in transcripts.items() for h in t.highlights or [] if "pricing" in h.tags
              for i, p in enumerate(t.phrases) if p.start < h.end and p.end > h.start}
    assert narrowed and {(h["stem"], h["phrase"]) for h in narrowed} <= tagged
    assert errors == []
    page.close()


def board_keys(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('.theme [data-key]')].map(c => c.dataset.key)")


def library_highlights(folder: Path) -> list[str]:
    return sorted(f"{p.stem}/{h.id}" for p in folder.glob("*.json") for h in Transcript.load(p).highlights or [])


def test_the_themes_board_holds_every_highlight_once_and_a_move_survives_a_reload(browser, meaning_workspace, meaning_folder):
    page = browser.open(f"{meaning_workspace.url}#/themes")
    page.locator(".theme").first.wait_for()
    keys = board_keys(page)
    assert sorted(keys) == library_highlights(meaning_folder) and len(keys) == len(set(keys))  # each once
    themes = page.locator(".theme").count()
    assert themes >= 2 and page.locator(".status").text_content().startswith(f"{len(keys)} highlights in {themes} themes, grouped by meaning")
    for n in range(themes):  # named, with how many interviews and people back it
        theme = page.locator(".theme").nth(n)
        assert theme.locator("h2").text_content().strip()
        quotes = theme.locator("[data-key]").count()
        assert theme.locator(".n-quotes").text_content() == f"{quotes} quote{'s' * (quotes != 1)}"
    shot(page, "workspace-themes.png")
    stale = browser.open(f"{meaning_workspace.url}#/themes")  # a second tab, drawn before the move
    stale.locator(".theme").first.wait_for()

    # Move the first theme's first highlight to the last theme.
    first, last = page.locator(".theme").first, page.locator(".theme").last
    key = first.locator("[data-key]").first.get_attribute("data-key")
    target = last.get_attribute("data-theme")
    with page.expect_response(lambda r: r.url.endswith("/api/themes/move")) as answer:
        first.locator("[data-key]").first.locator(".move select").select_option(target)
    assert answer.value.status == 200
    wait_for(page, f"document.querySelector('.theme[data-theme=\"{target}\"] [data-key=\"{key}\"]') !== null", timeout=5)
    page.reload()
    page.locator(".theme").first.wait_for()
    assert page.locator(f'.theme[data-theme="{target}"] [data-key="{key}"]').count() == 1  # kept
    assert sorted(board_keys(page)) == library_highlights(meaning_folder)
    # Dragged with the mouse onto another theme: moved too.
    dragged = page.locator(f'.theme[data-theme="{target}"] [data-key="{key}"]')
    onto = next(t for t in page.locator(".theme").evaluate_all("els => els.map(e => e.dataset.theme)") if t != target)
    page.bring_to_front()  # the other tab was opened last: a tab behind it gets the mouse late
    # The whole board in view: a page scrolled in the middle of a drag makes Chromium pick up what is under the mouse then.
    page.set_viewport_size({"width": 1280, "height": max(900, page.evaluate("document.documentElement.scrollHeight") + 50)})
    with page.expect_response(lambda r: r.url.endswith("/api/themes/move")) as answer:
        dragged.drag_to(page.locator(f'.theme[data-theme="{onto}"] h2'))
    assert answer.value.status == 200, answer.value.text()
    wait_for(page, f"document.querySelector('.theme[data-theme=\"{onto}\"] [data-key=\"{key}\"]') !== null", timeout=5)
    assert sorted(board_keys(page)) == library_highlights(meaning_folder)
    kept = (meaning_folder / ".igot" / "themes.json").read_bytes()

    # The other tab's board is older: its move is refused with "reload", nothing written.
    other = stale.locator("[data-key]").last
    choice = other.locator(".move select option").nth(1).get_attribute("value")
    with stale.expect_response(lambda r: r.url.endswith("/api/themes/move")) as answer:
        other.locator(".move select").select_option(choice)
    assert answer.value.status == 409
    stale.locator(".stale").wait_for()
    assert "Reload" in stale.locator("#toast").text_content()
    assert (meaning_folder / ".igot" / "themes.json").read_bytes() == kept
    stale.close()
    page.close()


def test_a_page_from_another_origin_cannot_move_a_highlight(browser, meaning_workspace, meaning_folder, tmp_path):
    from tests.webserver import serve

    page = browser.open(f"{meaning_workspace.url}#/themes")
    page.locator(".theme").first.wait_for()
    board = page.evaluate("igot.board()")
    key, to = board["themes"][0]["cards"][0]["key"], board["themes"][-1]["id"]
    page.close()
    files = meaning_folder / ".igot"
    before = {**files_of(meaning_folder), **{f".igot/{k}": v for k, v in files_of(files).items()}}
    (tmp_path / "evil.html").write_text("<!doctype html><title>evil</title><p>hello</p>")
    with serve(tmp_path) as evil:
        page = browser.open(f"{evil}/evil.html")
        page.evaluate("""async ([target, body]) => {
          await fetch(target + 'api/themes/move', {method: 'POST', mode: 'no-cors', body, headers: {'Content-Type': 'text/plain'}});
          try { await fetch(target + 'api/themes/move', {method: 'POST', body, headers: {'Content-Type': 'application/json'}}); } catch (e) {}
          const frame = document.createElement('iframe'); frame.name = 'sink'; document.body.appendChild(frame);
          const form = document.createElement('form');
          form.method = 'POST'; form.action = target + 'api/themes/move'; form.target = 'sink'; form.enctype = 'text/plain';
          const field = document.createElement('input'); field.name = body.slice(0, -1) + ',"x":"'; field.value = '"}';
          form.appendChild(field); document.body.appendChild(form); form.submit();
          await new Promise(r => setTimeout(r, 800));
        }""", [meaning_workspace.url, json.dumps({"version": board["version"], "tag": "", "highlight": key, "to": to})])
        page.close()
    assert {**files_of(meaning_folder), **{f".igot/{k}": v for k, v in files_of(files).items()}} == before
