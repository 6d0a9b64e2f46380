"""Who spoke when (senko on CPU, NeMo Sortformer on GPU), words to speakers and phrases, remembered voices."""
