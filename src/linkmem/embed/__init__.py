"""Embedding models: texts in, L2-normalised float32 vectors out."""

from linkmem.embed.base import Embedder, embed_one, l2_normalise
from linkmem.embed.registry import PROVIDERS, create_embedder

__all__ = ["PROVIDERS", "Embedder", "create_embedder", "embed_one", "l2_normalise"]
