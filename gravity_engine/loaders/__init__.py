"""Conversation files in, ``Conversation`` objects out: one entry point that detects the format.

Formats: LoCoMo, LongMemEval, ChatGPT export, generic JSON/JSONL/CSV records, plain-text
transcripts (see docs/formats.md). Every unreadable input raises one ``InputError`` that names
the file, the place and what was expected.
"""

from .load import FORMATS, load_bytes, load_conversation, load_conversations
from .options import ColumnMap, LoadLimits

__all__ = ["FORMATS", "ColumnMap", "LoadLimits", "load_bytes", "load_conversation", "load_conversations"]
