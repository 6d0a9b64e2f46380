"""A quiet local web server for download tests: only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from pathlib import Path
from typing import Iterator, Mapping, Optional


@contextlib.contextmanager
def serve(root: Path, status: Mapping[str, int] = {}, content_types: Mapping[str, str] = {},
          redirects: Mapping[str, str] = {}, endless: Mapping[str, str] = {}, heard: Optional[list] = None) -> Iterator[str]:
    """Serve `root` at the returned base URL. Paths in `status` answer with that HTTP error
    (403 for a private video, 410 for a removed one); `content_types` overrides the type a
    path is sent with (a media file behind a URL with no extension); `redirects` sends a path on
    to another URL (302); a path in `endless` answers, as the type given, bytes that never end (a
    live radio, or a page that never ends: no Content-Length, bytes until the client goes).
    `heard` gets the path of every request."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            if heard is not None:
                heard.append(self.path)
            if self.path in status:
                self.send_error(status[self.path])
            elif self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path in endless:
                self.send_response(200)
                self.send_header("Content-Type", endless[self.path])
                self.end_headers()
                self.close_connection = True
                try:
                    while True:  # about 6 MB a second: a stream, not a flood of the disk
                        self.wfile.write((b"<p>" if "html" in endless[self.path] else b"\xff\xfb\x90\x00") * 16384)
                        time.sleep(0.01)
                except OSError:
                    pass  # the client went away
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
