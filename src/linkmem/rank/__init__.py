"""Scoring: pure functions for BM25, its squashing sigmoid, fusion and the entity boost."""
