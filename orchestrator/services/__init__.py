"""Services every agent of a process shares: MCP, tool search, skills, compaction, embeddings."""

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
