"""Search by meaning over the library: phrases embedded (embed), found by words and meaning together
(meaning), questions answered from them with checked quotes (ask), highlights grouped into themes."""
