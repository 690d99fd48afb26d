"""The memories a host stores and returns, as the host API names them (``docs/add-a-host.md``); they live in
``gravity_engine.memories``, below the store, which keeps the dense host's vectors."""

from ..memories import Memory, conversation_memories, format_memory_list, memories_fingerprint, memory_line

__all__ = ["Memory", "conversation_memories", "format_memory_list", "memories_fingerprint", "memory_line"]
