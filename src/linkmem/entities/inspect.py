"""Entity inspection for ``Memory``: list, memories of, co-occurring, merge, rename."""

from __future__ import annotations

from typing import Any

from linkmem import validation as v
from linkmem.embed.base import Embedder
from linkmem.errors import InvalidInput, ModelUnavailable, NotFound
from linkmem.extract.base import EntityExtractor, normalise_key
from linkmem.store.base import Store
from linkmem.types import EntityRecord, Scope

ORDERS = ("links", "text", "recent")
Result = dict[str, Any]


class EntityInspection:
    """Mixed into ``Memory``; every call is scoped like the memory calls."""

    store: Store
    embedder: Embedder
    extractor: EntityExtractor | None

    def _require_entities(self) -> None:
        if self.extractor is None:
            raise ModelUnavailable("entity linking is disabled (entities=False) for this Memory")
        getter = getattr(self.extractor, "get", None)
        if getter is not None:
            getter()  # raises ModelUnavailable when no spaCy pipeline can be loaded

    def entities(
        self,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        order: str = "links",
        limit: int = 100,
        offset: int = 0,
    ) -> Result:
        """A scope's entities with kind and link count; ``order``: links, text or recent."""
        self._require_entities()
        if not isinstance(order, str) or order not in ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(ORDERS)}, got {v.shown(order)}")
        scope = v.make_scope(user_id, agent_id, run_id)
        rows = self.store.list_entities(
            scope, order, v.validate_top_k(limit, "limit"), v.validate_offset(offset)
        )
        return {"results": [e.to_dict() for e in rows]}

    def entity_memories(
        self, entity: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> Result:
        """The memories linked to an entity (given by id or by name), each with ``link``:
        ``own`` when its text names the entity, ``inherited`` when it refers back to it."""
        found = self._resolve_entity(entity, user_id, agent_id, run_id)
        ids = self.store.memories_of_entities([found.id]).get(found.id, [])
        own = set(self.store.memories_of_entities([found.id], own_only=True).get(found.id, []))
        records = self.store.get_memories(ids)
        results = [{**r.to_dict(), "link": _origin(r.id in own)} for r in records]
        return {"entity": found.to_dict(), "results": results}

    def memory_entities(
        self, memory_id: str, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
    ) -> Result:
        """The entities linked to one memory (scope-checked when a scope is given), each with
        ``link``: ``own`` or ``inherited`` (the memory refers back to it)."""
        self._require_entities()
        memory_id = v.validate_memory_id(memory_id)
        found = self.store.get_memories([memory_id])
        if not found or not v.lookup_scope(user_id, agent_id, run_id).contains(found[0].scope):
            raise NotFound(f"no memory with id {memory_id!r} in this scope; check the id")
        rows = self.store.entities_of_memories([memory_id]).get(memory_id, [])
        own = self.store.memories_of_entities([e.id for e in rows], own_only=True)
        return {
            "results": [
                {**e.to_dict(), "link": _origin(memory_id in own.get(e.id, ()))} for e in rows
            ]
        }

    def related_entities(
        self,
        entity: str,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        limit: int = 20,
    ) -> Result:
        """Entities that share memories with ``entity``, most shared first."""
        found = self._resolve_entity(entity, user_id, agent_id, run_id)
        rows = self.store.cooccurring_entities(found.id, v.validate_top_k(limit, "limit"))
        return {
            "entity": found.to_dict(),
            "results": [{**e.to_dict(), "shared_memories": n} for e, n in rows],
        }

    def merge_entities(
        self,
        keep: str,
        drop: str,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
    ) -> Result:
        """Move every link of ``drop`` to ``keep`` and delete ``drop``."""
        kept = self._resolve_entity(keep, user_id, agent_id, run_id)
        dropped = self._resolve_entity(drop, user_id, agent_id, run_id)
        if kept.id == dropped.id:
            raise InvalidInput("cannot merge an entity into itself")
        if kept.scope != dropped.scope:
            raise InvalidInput("entities of different scopes cannot be merged")
        self.store.merge_entities(kept.id, dropped.id)
        return {"results": [self.store.get_entities([kept.id])[0].to_dict()]}

    def rename_entity(
        self,
        entity: str,
        new_name: str,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
    ) -> Result:
        """Rename an entity; if the new name is another entity of the scope, merge into it."""
        found = self._resolve_entity(entity, user_id, agent_id, run_id)
        text = v.validate_text(new_name, v.MAX_NAME_CHARS, "new_name")
        key = normalise_key(text)
        with self.store.transaction():
            twin = self.store.find_entities(found.scope, [key]).get(key)
            if twin is not None and twin != found.id:
                self.store.merge_entities(twin, found.id)
                return {"results": [self.store.get_entities([twin])[0].to_dict()]}
            self.store.rename_entity(found.id, text, key, self.embedder.embed_batch([text])[0])
        return {"results": [self.store.get_entities([found.id])[0].to_dict()]}

    def _resolve_entity(
        self, entity: str, user_id: Any, agent_id: Any, run_id: Any
    ) -> EntityRecord:
        self._require_entities()
        scope = v.make_scope(user_id, agent_id, run_id)
        if not isinstance(entity, str) or not entity.strip():
            raise InvalidInput(f"entity must be an entity id or name, got {v.shown(entity)}")
        v.check_storable(entity, "entity")
        by_id = self.store.get_entities([entity.strip()])
        if by_id and scope.contains(by_id[0].scope):
            return by_id[0]
        key = normalise_key(entity)
        matches = [e for e in self._entities_named(scope, key)]
        if not matches:
            raise NotFound(
                f"no entity {v.shown(entity)} in this scope; list them with entities() "
                "(CLI: linkmem entities list)"
            )
        return max(matches, key=lambda e: e.link_count)

    def _entities_named(self, scope: Scope, key: str) -> list[EntityRecord]:
        """Entities with this key in ``scope`` or any scope under it (``user_id="alice"``
        also finds the ones written with an agent_id): an index lookup in the exact scope,
        else a scan of the scope's entities."""
        exact = self.store.find_entities(scope, [key])
        if exact:
            return self.store.get_entities(list(exact.values()))
        return [e for e in self.store.list_entities(scope, "links", 10_000) if e.key == key]


def _origin(own: bool) -> str:
    return "own" if own else "inherited"
