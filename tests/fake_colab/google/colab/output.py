import json
import os
import re


def eval_js(script, ignore_result=False, timeout_sec=None):
    """Colab's proxyPort(port) answers the address its proxy shows the port at."""
    port = re.search(r"proxyPort\((\d+)", script).group(1)
    return f"https://{port}-m-s-fake.prod.colab.dev/"


def serve_kernel_port_as_iframe(port, path="/", height="400", cache_in_notebook=False):
    """Colab shows the port in an iframe; here the call is written to FAKE_COLAB_IFRAMES."""
    record = os.environ.get("FAKE_COLAB_IFRAMES")
    if record:
        with open(record, "a", encoding="utf-8") as f:
            f.write(json.dumps({"port": port, "path": path, "height": height}) + "\n")
