"""Reading a commit: the corpus of parsed notes, BM25, tokens, the saved index."""
