"""Trains corral's query adapter for MiniLM (`services/_query_adapter.py`) on the tune part of
the retrieval dev set, and reports how well it does on queries it was not trained on.

The adapter is a rank-8 LoRA delta on the six layers' attention and feed-forward products. The
documents' vectors stay fixed, as corral computes them (the model unchanged); only the
request's pass through the encoder is trained, with a softmax over every tool (the second
stage's three cosines, weighted as it weighs them) or every skill, towards the expected ones.
The test part is never read. Run from the repo root; training needs PyTorch (CPU), which
corral itself does not:

    .venv/bin/pip install torch==2.13.0
    .venv/bin/python -m benchmarks.retrieval_adapter --folds 5            # cross-validate on tune
    .venv/bin/python -m benchmarks.retrieval_adapter --held-out-servers   # tools never trained on
    .venv/bin/python -m benchmarks.retrieval_adapter --write              # the shipped file

`--held-out-servers` trains on the tune queries of all servers but one group and scores that
group's tune queries: how the adapter does on tools it never saw, as a user's own servers are.
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from corral.orchestrator.services import MiniLMEmbedder
from corral.orchestrator.services._minilm import WEIGHTS_FILE, model_folder
from corral.orchestrator.services._query_adapter import ADAPTER_FILE
from corral.orchestrator.services.skills import SkillMatcher, SkillRoot, load_skills
from corral.orchestrator.services.toolsearch import ToolIndex, load_catalog
from corral.orchestrator.services.toolsearch._index import TOOL_PROFILE

from ._retrieval_data import SHARED, SKILL_QUERIES, TOOL_QUERIES, read_queries

PRODUCTS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
# The second stage's cosines and their weights: the adapter is trained for what it reads.
VIEWS = {
    name: weight
    for name, weight in (TOOL_PROFILE.rerank.weights if TOOL_PROFILE.rerank else {}).items()
    if name in ("cosine", "cosine:name", "cosine:parameters")
}
# Groups of servers held out in turn by `--held-out-servers` (each a product family).
SERVER_GROUPS = (("atlassian",), ("github", "gitlab"), ("kubernetes",), ("grafana",))


@dataclass(frozen=True)
class Example:
    words: str  # the request as corral embeds it (translated, corrected, identifiers' kinds)
    expected: tuple[int, ...]
    kind: str  # "tool" or "skill"
    part: str
    servers: frozenset[str]


@dataclass(frozen=True)
class Targets:
    tools: dict[str, Any]  # view name -> (tools x 384) tensor
    skills: Any  # (skills x 384) tensor


def dev_set() -> tuple[list[Example], Targets]:
    """Every tune query as corral would embed it (the test part is left unread), and the
    documents' vectors as corral computes them (the model without the adapter)."""
    import torch

    tools = load_catalog(SHARED / "tools")
    names = [t.name for t in tools]
    servers = {t.name: t.server for t in tools}
    index = ToolIndex(tools, MiniLMEmbedder(cache=None))
    hybrid = index._index
    examples = [
        Example(
            hybrid.query(q.text).embedded,
            tuple(names.index(e) for e in sorted(q.expected)),
            "tool",
            q.part,
            frozenset(servers[e] for e in q.expected),
        )
        for q in read_queries(TOOL_QUERIES, set(names))
        if q.part == "tune"
    ]
    skills = list(load_skills([SkillRoot(SHARED / "skills", "extra")]))
    skill_names = [s.name for s in skills]
    matcher = SkillMatcher(skills, MiniLMEmbedder(cache=None))
    examples += [
        Example(
            matcher._index.query(q.text).embedded,
            tuple(skill_names.index(e) for e in sorted(q.expected)),
            "skill",
            q.part,
            frozenset(),
        )
        for q in read_queries(SKILL_QUERIES, skill_names)
        if q.part == "tune"
    ]
    views = {"cosine": hybrid.vectors} | {
        f"cosine:{name}": vectors for name, vectors in hybrid._views.items()
    }
    targets = Targets(
        {name: torch.from_numpy(np.asarray(views[name])) for name in VIEWS},
        torch.from_numpy(np.asarray(matcher._index.vectors)),
    )
    return examples, targets


class Encoder:
    """all-MiniLM-L6-v2 in PyTorch, as `_bert.BertEncoder` computes it, with a LoRA pair on
    each product of `PRODUCTS`; only the pairs are trained."""

    def __init__(self, rank: int, alpha: float, seed: int) -> None:
        import torch
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        torch.manual_seed(seed)
        folder = model_folder()
        self.w = {
            k: torch.from_numpy(v.copy()) for k, v in load_file(str(folder / WEIGHTS_FILE)).items()
        }
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(256)
        self.layers = 1 + max(
            int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer.")
        )
        self.scale = alpha / rank
        self.pairs: dict[str, tuple[Any, Any]] = {}
        for layer in range(self.layers):
            for product in PRODUCTS:
                name = f"encoder.layer.{layer}.{product}"
                out, inputs = self.w[f"{name}.weight"].shape
                a = torch.randn(rank, inputs) / math.sqrt(inputs)
                self.pairs[name] = (a.requires_grad_(), torch.zeros(out, rank, requires_grad=True))

    def parameters(self) -> list[Any]:
        return [p for pair in self.pairs.values() for p in pair]

    def embed(self, texts: Sequence[str]) -> Any:
        import torch
        import torch.nn.functional as f

        ids = [self.tokenizer.encode(text).ids for text in texts]
        width = max(map(len, ids))
        tokens = torch.zeros(len(ids), width, dtype=torch.long)
        mask = torch.zeros(len(ids), width)
        for row, sequence in enumerate(ids):
            tokens[row, : len(sequence)] = torch.tensor(sequence)
            mask[row, : len(sequence)] = 1.0
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][tokens]
            + w["embeddings.position_embeddings.weight"][:width]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for layer in range(self.layers):
            x = self._layer(x, f"encoder.layer.{layer}.", bias)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return f.normalize(pooled, dim=-1)

    def _linear(self, x: Any, name: str) -> Any:
        a, b = self.pairs[name]
        return (
            x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"] + (x @ a.T @ b.T) * self.scale
        )

    def _norm(self, x: Any, name: str) -> Any:
        import torch.nn.functional as f

        return f.layer_norm(
            x, x.shape[-1:], self.w[f"{name}.weight"], self.w[f"{name}.bias"], 1e-12
        )

    def _layer(self, x: Any, prefix: str, bias: Any) -> Any:
        import torch.nn.functional as f

        batch, width, hidden = x.shape
        heads = 12

        def split(t: Any) -> Any:
            return t.view(batch, width, heads, -1).transpose(1, 2)

        q, k, v = (
            split(self._linear(x, f"{prefix}attention.self.{n}")) for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(-1, -2) / math.sqrt(hidden // heads) + bias
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, width, hidden)
        x = self._norm(
            self._linear(context, f"{prefix}attention.output.dense") + x,
            f"{prefix}attention.output.LayerNorm",
        )
        inner = f.gelu(self._linear(x, f"{prefix}intermediate.dense"))
        return self._norm(
            self._linear(inner, f"{prefix}output.dense") + x, f"{prefix}output.LayerNorm"
        )

    def arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        """The adapter file's arrays: A, and B with the LoRA scale applied."""
        found = {}
        for name, (a, b) in self.pairs.items():
            found[f"{name}.lora_a"] = a.detach().numpy().astype(np.float16)
            found[f"{name}.lora_b"] = (b.detach() * self.scale).numpy().astype(np.float16)
        return found


def scorer(targets: Targets, kind: str) -> Callable[[Any], Any]:
    if kind == "skill":
        return lambda vectors: vectors @ targets.skills.T
    total = sum(VIEWS.values())
    return lambda vectors: sum(w * (vectors @ targets.tools[n].T) for n, w in VIEWS.items()) / total


def loss_of(
    encoder: Encoder, batch: Sequence[Example], targets: Targets, temperature: float
) -> Any:
    import torch

    vectors = encoder.embed([e.words for e in batch])
    loss = torch.zeros(())
    for kind in ("tool", "skill"):
        rows = [i for i, e in enumerate(batch) if e.kind == kind]
        if not rows:
            continue
        scores = scorer(targets, kind)(vectors[rows]) / temperature
        wanted = torch.full_like(scores, float("-inf"))
        for row, i in enumerate(rows):
            wanted[row, list(batch[i].expected)] = 0.0
        loss = loss + (torch.logsumexp(scores, 1) - torch.logsumexp(scores + wanted, 1)).sum()
    return loss / len(batch)


def train(examples: Sequence[Example], targets: Targets, args: argparse.Namespace) -> Encoder:
    import torch

    encoder = Encoder(args.rank, args.alpha, args.seed)
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=args.lr, weight_decay=0.01)
    order = list(examples)
    rng = random.Random(args.seed)
    steps = args.epochs * math.ceil(len(order) / args.batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 10) * max(0.0, 1 - s / steps)
    )
    for _ in range(args.epochs):
        rng.shuffle(order)
        for start in range(0, len(order), args.batch):
            loss = loss_of(encoder, order[start : start + args.batch], targets, args.temperature)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    return encoder


def soup(encoders: Sequence[Encoder]) -> Encoder:
    """The mean of several adapters' deltas, as one adapter: the mean of the products `B_k A_k`
    is `[B_1 .. B_K] / K` times `[A_1; ..; A_K]`, a LoRA pair of K times the rank."""
    import torch

    first, count = encoders[0], len(encoders)
    merged = Encoder.__new__(Encoder)
    merged.__dict__.update(first.__dict__)
    merged.pairs = {
        name: (
            torch.cat([e.pairs[name][0].detach() for e in encoders], 0),
            torch.cat([e.pairs[name][1].detach() / count for e in encoders], 1),
        )
        for name in first.pairs
    }
    return merged


def trained(examples: Sequence[Example], targets: Targets, args: argparse.Namespace) -> Encoder:
    """One adapter, or with `--seeds N` the soup of N, each trained from its own seed."""
    if args.seeds == 1:
        return train(examples, targets, args)
    return soup(
        [
            train(examples, targets, argparse.Namespace(**{**vars(args), "seed": args.seed + k}))
            for k in range(args.seeds)
        ]
    )


def recall(
    encoder: Encoder | None, examples: Sequence[Example], targets: Targets, base: Encoder
) -> str:
    """Embedding-only recall@1/@5 (tools) or top-1/top-3 (skills), with or without the adapter."""
    import torch

    model = encoder or base
    parts = []
    for kind, depth in (("tool", 5), ("skill", 3)):
        chosen = [e for e in examples if e.kind == kind]
        if not chosen:
            continue
        with torch.no_grad():
            top = scorer(targets, kind)(model.embed([e.words for e in chosen])).topk(depth).indices
        first = sum(
            bool(set(e.expected) & set(t[:1])) for e, t in zip(chosen, top.tolist(), strict=True)
        )
        some = sum(
            bool(set(e.expected) & set(t)) for e, t in zip(chosen, top.tolist(), strict=True)
        )
        parts.append(
            f"{kind}s {first / len(chosen):.3f} / {some / len(chosen):.3f} of {len(chosen)}"
        )
    return "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=0, help="cross-validate within tune")
    parser.add_argument("--held-out-servers", action="store_true")
    parser.add_argument(
        "--write", action="store_true", help=f"train on all of tune, write {ADAPTER_FILE.name}"
    )
    parser.add_argument("--out", type=Path, default=ADAPTER_FILE)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--temperature", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--seeds", type=int, default=1, help="train this many seeds and average their deltas"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(2)
    tune, targets = dev_set()
    base = Encoder(args.rank, args.alpha, args.seed)

    def compare(label: str, held: Sequence[Example], rest: Sequence[Example]) -> None:
        adapter = trained(rest, targets, args)
        without, with_ = recall(None, held, targets, base), recall(adapter, held, targets, base)
        print(f"{label}: without {without}; with {with_}", flush=True)

    if args.folds:
        shuffled = sorted(tune, key=lambda e: random.Random(e.words).random())
        for fold in range(args.folds):
            held = shuffled[fold :: args.folds]
            compare(f"fold {fold}", held, [e for e in shuffled if e not in held])
    if args.held_out_servers:
        for group in SERVER_GROUPS:
            held = [e for e in tune if e.kind == "tool" and e.servers & set(group)]
            compare("+".join(group), held, [e for e in tune if not (e.servers & set(group))])
    if args.write:
        adapter = trained(tune, targets, args)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, Any] = adapter.arrays()
        np.savez(args.out, **arrays)
        print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
