"""Services every agent of a process shares: MCP, tool search, skills, compaction, embeddings.

The embedding names are imported on first use: they bring numpy, which a run that configures no
skills, tool search or MCP server never needs (its compaction imports this package too).
"""

from typing import TYPE_CHECKING

from corral._lazy import lazy_exports

if TYPE_CHECKING:
    from ._embedding import Embedder as Embedder
    from ._embedding import EmbeddingUnavailable as EmbeddingUnavailable
    from ._embedding import HashingEmbedder as HashingEmbedder
    from ._embedding import Vectors as Vectors
    from ._embedding import WordLlamaEmbedder as WordLlamaEmbedder
    from ._embedding import reciprocal_rank_fusion as reciprocal_rank_fusion
    from ._minilm import MiniLMEmbedder as MiniLMEmbedder
    from ._minilm import retrieval_embedder as retrieval_embedder
    from ._vector_cache import VectorCache as VectorCache
    from ._vector_cache import default_cache_dir as default_cache_dir

__getattr__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(
            (
                "Embedder",
                "EmbeddingUnavailable",
                "HashingEmbedder",
                "Vectors",
                "WordLlamaEmbedder",
                "reciprocal_rank_fusion",
            ),
            "._embedding",
        ),
        **dict.fromkeys(("MiniLMEmbedder", "retrieval_embedder"), "._minilm"),
        **dict.fromkeys(("VectorCache", "default_cache_dir"), "._vector_cache"),
    },
)

__all__ = [
    "Embedder",
    "EmbeddingUnavailable",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "VectorCache",
    "Vectors",
    "WordLlamaEmbedder",
    "default_cache_dir",
    "reciprocal_rank_fusion",
    "retrieval_embedder",
]
