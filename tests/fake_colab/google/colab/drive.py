import os
from pathlib import Path


def mount(mountpoint, force_remount=False):
    """Colab mounts the user's Drive at mountpoint/MyDrive; here it is a local folder."""
    link = Path(mountpoint) / "MyDrive"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists():
        link.symlink_to(os.environ["FAKE_COLAB_DRIVE"], target_is_directory=True)
