"""Internal: what must never reach a cassette file (scrubbing, the secret guard)."""
