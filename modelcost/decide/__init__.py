"""Decisions: which config to deploy (recommend), is the candidate faster (compare), make one (quantize)."""
