"""A quiet local web server for download tests: only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import contextlib
import http.server
import threading
from pathlib import Path
from typing import Iterator, Mapping


@contextlib.contextmanager
def serve(root: Path, status: Mapping[str, int] = {}, content_types: Mapping[str, str] = {}) -> Iterator[str]:
    """Serve `root` at the returned base URL. Paths in `status` answer with that HTTP error
    (403 for a private video, 410 for a removed one); `content_types` overrides the type a
    path is sent with (a media file behind a URL with no extension)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            if self.path in status:
                self.send_error(status[self.path])
            else:
                super().do_GET()

        def guess_type(self, path):
            name = "/" + Path(path).name
            return content_types.get(name) or super().guess_type(path)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
