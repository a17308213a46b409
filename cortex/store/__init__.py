"""Git: reads, the compare-and-swap write, the working tree, the remote (the only pygit2 users)."""
