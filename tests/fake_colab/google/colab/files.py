import os
import shutil
from pathlib import Path


def upload():
    path = os.environ.get("FAKE_COLAB_UPLOAD")
    if not path:
        return {}  # the user closed the file picker
    return {Path(path).name: Path(path).read_bytes()}


def download(filename):
    target = Path(os.environ["FAKE_COLAB_DOWNLOADS"])
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(filename, target / Path(filename).name)
