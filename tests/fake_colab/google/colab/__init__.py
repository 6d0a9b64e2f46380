"""A stand-in for Colab's `google.colab` package, for running the notebook in tests.

It does what a person would do in Colab, driven by environment variables the test sets:
FAKE_COLAB_UPLOAD (the file the user picks), FAKE_COLAB_DRIVE (the folder that is My Drive),
FAKE_COLAB_DOWNLOADS (where offered downloads land), FAKE_COLAB_SECRETS (JSON of secrets).
"""
