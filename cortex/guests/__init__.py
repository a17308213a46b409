"""Guests: their policies, the proposal queue in Redis, the owner's review."""
