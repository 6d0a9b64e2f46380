"""The local LLM summary (Gemma 3) with linked evidence, and its decoding."""
