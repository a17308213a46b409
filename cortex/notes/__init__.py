"""Notes as text: parsing, Markdown structure, blocks, paths, masking, fences (pure)."""
