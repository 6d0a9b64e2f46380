"""Everything a run leaves: files (HTML, MD, SRT, VTT, JSON), the Google Doc and Sheet, the library page, video links."""
