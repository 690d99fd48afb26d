"""The query path: anchor retrieval with rerank, temporal preservation, expansion and injection."""

from .config import VARIANTS, Mode, QueryConfig, get_variant
from .pipeline import GravityQuery, GravityResult, QueryResult, ask, resolve_embedder
from .session import fuse
from .trace import TRACE_VERSION, QueryTrace

__all__ = ["TRACE_VERSION", "VARIANTS", "GravityQuery", "GravityResult", "Mode", "QueryConfig", "QueryResult",
           "QueryTrace", "ask", "fuse", "get_variant", "resolve_embedder"]
