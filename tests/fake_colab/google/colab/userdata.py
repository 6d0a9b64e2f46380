import json
import os


class SecretNotFoundError(Exception):
    pass


def get(key):
    secrets = json.loads(os.environ.get("FAKE_COLAB_SECRETS", "{}"))
    if key not in secrets:
        raise SecretNotFoundError(key)
    return secrets[key]
