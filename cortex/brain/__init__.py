"""The Brain: one-commit writes, the working-tree watcher, the lock, working state."""
