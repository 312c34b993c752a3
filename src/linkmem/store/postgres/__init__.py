"""PostgreSQL + pgvector backend: HNSW vector search, SQL BM25, multi-process writes."""

from linkmem.store.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
