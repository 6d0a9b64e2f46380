"""Getting the recording: a link, upload or Drive file (source), then 16 kHz mono audio (audio)."""
