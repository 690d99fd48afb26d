"""Gravity: structured anchors (entities, events, topics) for long-horizon conversational memory.

Build phase: ``load_conversation`` -> ``build_store`` -> an ``AnchorStore`` directory that any
host can load. Query phase: ``gravity_engine.query``.
"""

__version__ = "0.1.0"
