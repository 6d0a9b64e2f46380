"""Word timing (wav2vec2 CTC alignment), punctuation, and the text rules they share."""
