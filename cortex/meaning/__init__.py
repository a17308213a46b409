"""The meaning arm: the embedding model, passages and their vectors."""
