"""Retrieval shared by tool search and skill matching: typo-tolerant fielded BM25 fused with
embedding similarity, optionally rescored by a weighted sum of features (`Rerank`), with the
parts of each score kept for `--explain`."""

from ._analyzer import STOPWORDS as STOPWORDS
from ._analyzer import Speller as Speller
from ._analyzer import analyze as analyze
from ._analyzer import split_identifier as split_identifier
from ._fielded import FieldedBM25 as FieldedBM25
from ._fusion import Fused as Fused
from ._fusion import fuse as fuse
from ._hybrid import RANKERS as RANKERS
from ._hybrid import Explanation as Explanation
from ._hybrid import HybridIndex as HybridIndex
from ._hybrid import Profile as Profile
from ._hybrid import Query as Query
from ._hybrid import Ranker as Ranker
from ._rerank import Rerank as Rerank

__all__ = [
    "RANKERS",
    "STOPWORDS",
    "Explanation",
    "FieldedBM25",
    "Fused",
    "HybridIndex",
    "Profile",
    "Query",
    "Ranker",
    "Rerank",
    "Speller",
    "analyze",
    "fuse",
    "split_identifier",
]
