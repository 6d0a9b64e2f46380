"""Speech to text: Whisper through faster-whisper, transformers or openai-whisper."""
