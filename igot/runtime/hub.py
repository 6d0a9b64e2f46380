"""Models from the Hugging Face hub, online or not.

With no connection, the hub client retries every file for about 40 s before giving up, and each
default model costs that again. So a run asks once, in a few seconds, whether the hub answers
(or takes HF_HUB_OFFLINE=1 at its word); if not, models load from the local cache only, and a
default model that is not there is skipped at once.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional
from urllib.parse import urlparse

PROBE_SECONDS = 3.0  # a hub that takes longer than this to answer would not deliver a model either
HUB_ID = re.compile(r"[\w.-]+(/[\w.-]+)?")  # "org/model", or an old top-level "gpt2"


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def host() -> str:
    """The hub's name as users know it: huggingface.co, or the mirror HF_ENDPOINT names."""
    return urlparse(endpoint()).netloc or endpoint()


def offline_requested() -> bool:
    return any(os.environ.get(k, "").strip().upper() in ("1", "ON", "YES", "TRUE") for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def reachable(timeout: float = PROBE_SECONDS) -> bool:
    """Whether the hub answers within `timeout` (through the proxy the environment names, if any)."""
    if offline_requested():
        return False
    try:
        urllib.request.urlopen(urllib.request.Request(f"{endpoint()}/api/models?limit=1", method="HEAD"), timeout=timeout).close()
    except urllib.error.HTTPError as exc:
        return exc.code < 500  # it answered; a 5xx is a proxy or a hub that cannot serve models now
    except (OSError, ValueError):  # no route, no name resolution, refused, timed out, a bad HF_ENDPOINT
        return False
    return True


def is_hub_id(name: str) -> bool:
    """'org/model' (or 'gpt2') that is not a folder or file here."""
    return bool(HUB_ID.fullmatch(name)) and not Path(name).expanduser().exists()


def cached(repo_id: str) -> Optional[Path]:
    """The folder of the model's cached copy (HF_HUB_CACHE), or None if it was never downloaded."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # not in the cache (LocalEntryNotFoundError), or no huggingface_hub at all
        return None


def from_cache(name: str, access: Optional["Hub"] = None) -> bool:
    """Whether the model `name` loads from the local cache only: a hub model already downloaded
    (the hub is not asked: no check for a newer copy, no wait), or one the hub cannot deliver now
    (`access` asked, once). A folder or file on this computer: False, nothing comes from the hub."""
    return is_hub_id(name) and (cached(name) is not None or not (access or Hub()).online)


def out_of_reach(name: str, access: Optional["Hub"] = None) -> bool:
    """Whether the hub model `name` cannot be had now: not in the local cache, and the hub cannot
    be reached. The cache is looked at first: a model there costs no question to the hub."""
    return is_hub_id(name) and cached(name) is None and not (access or Hub()).online


class Hub:
    """Whether this run can download models: asked once, the first time a hub model is needed."""

    def __init__(self, online: Optional[bool] = None):
        self._online = online

    @property
    def online(self) -> bool:
        if self._online is None:
            self._online = reachable()
        return self._online

    def unreachable(self) -> str:
        """Why nothing can be downloaded, for a message."""
        return "HF_HUB_OFFLINE is set" if offline_requested() else f"{host()} cannot be reached"
