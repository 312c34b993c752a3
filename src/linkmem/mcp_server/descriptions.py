"""What the model reads about the tools: the server's instructions, one description per tool
(when to call it, what it returns, an example) and the arguments' descriptions.

Every client sends these to its model with each turn, so they are short;
``tests/mcp/test_schemas.py`` holds them to a size budget.
"""

from __future__ import annotations

INSTRUCTIONS = (
    "linkmem is your long-term memory about the user and your work: it keeps facts across "
    "conversations. Search it before answering anything that depends on the past (people, "
    "pets, places, preferences, projects, decisions); add durable facts as you learn them; "
    "update or delete memories that turn out wrong. Names in memories (people, places, files) "
    "become entities linked to every memory that mentions them. The server decides whose "
    "memory this is: leave user_id out unless told to pass one; agent_id and run_id narrow."
)

TOOLS = {
    "add_memory": (
        "Remember facts worth keeping across conversations: preferences, people, pets, plans, "
        "decisions. Pass text (one memory) or messages (each non-system message becomes one "
        "memory), not both. Returns the new memory ids. "
        'Example: {"text": "The user adopted a dog named Max", "metadata": {"topic": "pets"}}'
    ),
    "search_memory": (
        "Find the memories relevant to a question; call it before answering whenever the user "
        "refers to their past, people, pets or projects. Matches meaning, words and linked "
        "entities. Returns the best matches, each with id, text and score (0-1); explain=true "
        'adds the score parts. Example: {"query": "how is my dog?", "top_k": 5}'
    ),
    "list_memories": (
        "List stored memories, newest first, optionally filtered by metadata; for reviewing "
        "or paging (to answer a question, use search_memory). Returns ids and texts. "
        'Example: {"limit": 20, "filters": {"topic": "pets"}}'
    ),
    "get_memory": (
        "Read one memory by its id (from search or list results): text, metadata, scope and "
        'timestamps. Example: {"memory_id": "0b7e..."}'
    ),
    "update_memory": (
        "Correct a memory that is out of date or wrong, instead of adding a contradicting one. "
        "New text replaces the old (entities are re-linked); metadata is merged. Returns the "
        'updated memory. Example: {"memory_id": "0b7e...", "text": "Max is 4 years old"}'
    ),
    "delete_memory": (
        "Forget one memory by id, when the user asks you to or it is wrong. "
        'Example: {"memory_id": "0b7e..."}'
    ),
    "list_entities": (
        "List the people, pets, places, files and topics that memories mention, each with the "
        'number of memories linked to it, most linked first. Example: {"limit": 50}'
    ),
    "entity_memories": (
        "Everything remembered about one entity, named or by id: what is known about Max, "
        'Lisbon or config.yaml. Returns the entity and its memories. Example: {"entity": "Max"}'
    ),
    "related_entities": (
        "Entities that share memories with the given one, most shared first: who and what is "
        'connected to Max. Example: {"entity": "Max", "limit": 10}'
    ),
}

ARGS = {
    "text": "The memory, one fact or a short passage.",
    "messages": 'Chat messages, e.g. [{"role": "user", "content": "..."}].',
    "metadata": 'JSON object kept with the memory, e.g. {"topic": "pets"}.',
    "timestamp": "When it was said, ISO-8601 (default: now).",
    "query": "The question or keywords.",
    "top_k": "How many results.",
    "filters": 'Metadata filter, e.g. {"topic": "pets"} or {"year": {"gte": 2024}}.',
    "explain": "Add each result's score parts.",
    "limit": "How many rows.",
    "offset": "Rows to skip, for paging.",
    "memory_id": "A memory id from earlier results.",
    "entity": "Entity name or id.",
    "order": "links (most linked first), text or recent.",
    "user_id": "Optional; the server sets it.",
    "agent_id": "Optional: only this agent's memories.",
    "run_id": "Optional: only this run's (session's) memories.",
}
