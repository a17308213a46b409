"""brain_ask and brain_verify: retrieve, pack, read, verify, stamp."""
