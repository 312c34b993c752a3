"""Entity linking: the write-path upsert and the read-path boost over the entity collection."""
