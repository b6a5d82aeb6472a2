"""`MemoryService`: remembering after a run, consolidating, and recalling into a turn.

It holds the store, the `[memories]` settings, the embedder (loaded on first use), the clock and
the redactor, and is the one boundary where memory's failures are contained: a turn whose recall
fails goes on without memory, and a run whose extraction fails still ends as it did.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from corral.agents import CorralConfig, FunctionCall, Item, MemoriesConfig, ModelClient
from corral.tools import Redactor, SandboxMode, is_secret_name

from ._changes import RunChanges
from ._fragment import render_memory
from ._ranking import rank
from ._records import (
    MAX_TEXT,
    Insight,
    MemoryRecord,
    new_insight_id,
    new_memory_id,
    project_of,
    relative_files,
)
from ._requests import (
    CONSOLIDATION_INPUT,
    EXTRACTION_VERSION,
    Extracted,
    consolidation_request,
    extraction_request,
    parse_extracted,
    parse_insights,
)
from ._store import MemoryStore
from ._transcript import involved_files, transcript

if TYPE_CHECKING:
    from corral.agents import AgentSpec

    from ..services import Embedder

logger = logging.getLogger(__name__)
MAX_FILES = 20
RUNS_TRACKED = 64
"""Runs whose recall state one service keeps (a service outlives its runs: the oldest go)."""


def _default_embedder() -> Embedder:
    from ..services import retrieval_embedder  # MiniLM in NumPy: loaded only when memory is on

    return retrieval_embedder()


class MemoryService:
    """Memory for the runs of one process (or one command)."""

    def __init__(
        self,
        store: MemoryStore,
        settings: MemoriesConfig,
        *,
        env: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
        embedder: Callable[[], Embedder] = _default_embedder,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        named = [value for name, value in (env or {}).items() if is_secret_name(name)]
        self._redact = Redactor([*secrets, *named])
        self._excluded = {str(Path(p).expanduser().resolve()) for p in settings.excluded_projects}
        self._runs: OrderedDict[str, _RunRecall] = OrderedDict()

    @classmethod
    def for_config(
        cls, store: MemoryStore, config: CorralConfig, env: Mapping[str, str]
    ) -> MemoryService:
        """The service `config` describes, redacting beyond the values named like secrets the
        model keys it names (whatever their variables are called) and the secrets it gives
        commands (`shell_environment_policy.set`) and its providers' `env_http_headers`."""
        key_vars = [config.model_api_key_env]
        key_vars += [p.env_key for p in config.model_providers.values() if p.env_key]
        # A provider's secret headers are keys too (Azure's `api-key`, a gateway's token).
        key_vars += [
            v for p in config.model_providers.values() for v in p.env_http_headers.values()
        ]
        given = config.shell_environment_policy.set
        secrets = [env[v] for v in key_vars if v in env]
        secrets += [value for name, value in given.items() if is_secret_name(name)]
        return cls(store, config.memories, env=env, secrets=secrets)

    def project_for(self, cwd: Path) -> str | None:
        """The project `cwd` belongs to, or None when memory is off for it."""
        if not self.settings.enabled:
            return None
        project = project_of(cwd)
        return None if project in self._excluded else project

    # -- recall -------------------------------------------------------------------------------

    async def recall(
        self, spec: AgentSpec, query: str, histories: Sequence[Sequence[Item]]
    ) -> str | None:
        """The memory fragment for a turn of `spec` on `query`; None if nothing (or failed).
        `histories` are the run's agents' histories so far (each only grows until compacted)."""
        try:
            return await self._recall(spec, query, histories)
        except Exception:  # memory's boundary: a turn never fails for want of memory
            logger.exception("memory recall failed; the turn goes on without it")
            return None

    async def _recall(
        self, spec: AgentSpec, query: str, histories: Sequence[Sequence[Item]]
    ) -> str | None:
        project = self.project_for(spec.cwd)
        if project is None:
            return None
        run = self._run(spec.run_id)
        changed = run.changes.files(histories)
        # Most projects have no memories: one count, remembered for the run until it writes,
        # spares every turn the load of the whole list.
        if project in run.empty or not await self.store.count(project):
            run.empty.add(project)
            return None
        memories = await self.store.memories(project)
        insights = await self.store.insights(project)
        if not memories and not insights:
            return None
        ranked = []
        if memories and query.strip():
            (vector,) = await self._embed([query])
            files = relative_files(project, changed, spec.cwd)
            now = self.clock()
            ranked = rank(vector, memories, project=project, changed_files=files, now=now)
        return render_memory(insights, [r.memory for r in ranked])

    def _run(self, run_id: str) -> _RunRecall:
        run = self._runs.pop(run_id, None) or _RunRecall()
        self._runs[run_id] = run
        while len(self._runs) > RUNS_TRACKED:
            self._runs.popitem(last=False)
        return run

    def _wrote(self, project: str) -> None:
        """A write to `project`'s memories: no run may go on believing it has none."""
        for run in self._runs.values():
            run.empty.discard(project)

    async def _embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        if self._embedder is None:
            self._embedder = await anyio.to_thread.run_sync(self._make_embedder)
        embedder = self._embedder
        vectors = await anyio.to_thread.run_sync(lambda: embedder.embed(list(texts)))
        return [tuple(float(x) for x in row) for row in vectors]

    # -- phase 1: after a run -----------------------------------------------------------------

    async def after_run(
        self, spec: AgentSpec, task: str, history: Sequence[Item], client: ModelClient
    ) -> list[MemoryRecord]:
        """Remember what a completed run learned, then consolidate if enough is new. Failures
        are logged, never raised: the run has already ended."""
        try:
            self._runs.pop(spec.run_id, None)  # the run has ended: its recall state goes
            kept = await self.remember(spec, task, history, client)
            project = self.project_for(spec.cwd)
            if kept and project and await self._due(project):
                await self.consolidate(project, client, spec.model.model)
            return kept
        except Exception:  # memory's boundary: the run's result stands whatever happens here
            logger.exception("memory extraction failed; nothing was remembered from this run")
            return []

    async def _due(self, project: str) -> bool:
        """Whether `consolidate_every` new raw memories have come since the last merge."""
        every = self.settings.consolidate_every
        return bool(every) and await self.store.since_consolidation(project) >= every

    async def remember(
        self, spec: AgentSpec, task: str, history: Sequence[Item], client: ModelClient
    ) -> list[MemoryRecord]:
        """Ask the model what is worth remembering from the run, redact, embed and keep it."""
        project = self.project_for(spec.cwd)
        # A read-only agent never writes, memories included; a run without one tool call
        # looked at nothing in the project, so there is nothing of it to learn.
        if project is None or spec.profile.sandbox is SandboxMode.READ_ONLY:
            return []
        if not any(isinstance(item, FunctionCall) for item in history):
            return []
        # Once per run: a resumed run that ends again must not store its facts twice.
        if any(m.run_id == spec.run_id for m in await self.store.memories(project)):
            return []
        request = extraction_request(spec.model.model, transcript(task, history, self._redact))
        facts = parse_extracted(await client.complete(request))
        raw_files = [self._redact(path) for path in involved_files(history)]
        involved = relative_files(project, raw_files, spec.cwd)
        records = await self._records(spec, project, facts, involved)
        if records:
            await self.store.add(records, cap=self.settings.max_per_project)
            self._wrote(project)
        return records

    async def _records(
        self, spec: AgentSpec, project: str, facts: list[Extracted], involved: tuple[str, ...]
    ) -> list[MemoryRecord]:
        texts = [self._redact(fact.text)[:MAX_TEXT] for fact in facts]
        vectors = await self._embed(texts) if texts else []
        now = self.clock()
        return [
            MemoryRecord(
                memory_id=new_memory_id(),
                project=project,
                text=text,
                files=self._files(project, spec.cwd, fact, involved),
                run_id=spec.run_id,
                agent_id=spec.agent_id,
                created_at=now,
                embedding=vector,
                prompt_version=EXTRACTION_VERSION,
            )
            for fact, text, vector in zip(facts, texts, vectors, strict=True)
        ]

    def _files(
        self, project: str, cwd: Path, fact: Extracted, involved: tuple[str, ...]
    ) -> tuple[str, ...]:
        # Redacted before the paths are normalised too: `a://b` folds to `a:/b`, which would
        # hide a URL's password from the pattern that knows it.
        named = [self._redact(f) for f in fact.files]
        chosen = relative_files(project, named, cwd) if named else involved
        return tuple(self._redact(f) for f in chosen[:MAX_FILES])

    # -- phase 2: consolidation ---------------------------------------------------------------

    async def consolidate(self, project: str, client: ModelClient, model: str) -> list[Insight]:
        """Merge the project's newest raw memories into its insights (replacing the old list)."""
        memories = (await self.store.memories(project))[:CONSOLIDATION_INPUT]
        now = self.clock()
        if not memories:
            await self.store.replace_insights(project, [], now)
            return []
        response = await client.complete(consolidation_request(model, memories))
        known = {m.memory_id for m in memories}
        insights = [
            i.model_copy(update={"text": self._redact(i.text)[:MAX_TEXT]})
            for i in parse_insights(response, project, known, now, new_insight_id)
        ]
        await self.store.replace_insights(project, insights, now)
        self._wrote(project)
        return insights


class _RunRecall:
    """What recall remembers of one run between its turns."""

    def __init__(self) -> None:
        self.changes = RunChanges()
        self.empty: set[str] = set()
        """Projects found to hold no memories, until this service writes to them."""
