"""iGot, the Insights Gathering Open-source Tool: interview recordings to linked transcripts."""

__version__ = "0.1.0"

from igot.errors import IgotError
from igot.transcript import Phrase, Source, Speaker, SpeakerTurn, Transcript, Word

__all__ = ["IgotError", "Phrase", "Source", "Speaker", "SpeakerTurn", "Transcript", "Word", "__version__"]
