def authenticate_user(clear_output=True):
    """Colab shows a consent pop-up here; the test's user has already agreed."""
