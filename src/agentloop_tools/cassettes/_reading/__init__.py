"""Internal: reading recorded traffic back into transcripts."""
