"""The query planner's view of the indexed vocabulary, kept per committed index version off the
request path.

``query.Lexicon`` (spelling correction, word shares, and the corpus alias table of ``aliases.py``)
is built from the BM25 index's ``Vocabulary``; over the 16k-section MedQuAD knowledge base that takes
about a second. ``LexiconKeeper`` builds it when the index version changes, never in a search:

* a commit made by this process builds the new version's lexicon before the commit returns
  (``build``: the ingest pays for it);
* a commit seen from another process (``ChromaIndex.refresh``) starts a build in one background
  thread (``build_soon``); commits that land meanwhile are folded into the next build.

A search reads ``current``: the last complete lexicon, replaced by a single assignment once the next
one is built, so a search during a build uses the previous table whole, never a half-built one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from gateway.knowledge.lexical import Vocabulary
from gateway.knowledge.query import Lexicon

log = structlog.get_logger("gateway.knowledge")


@dataclass(frozen=True)
class VersionedLexicon:
    version: str
    lexicon: Lexicon


class LexiconKeeper:
    """The lexicon of the latest committed version this process has built (see the module docstring).

    ``read`` returns the committed version and its vocabulary, read consistently (under the store's
    read lock); ``make`` turns a vocabulary into a lexicon (``QueryPlanner.lexicon``).
    """

    def __init__(
        self, read: Callable[[], tuple[str, Vocabulary]], make: Callable[[Vocabulary], Lexicon]
    ) -> None:
        self._read = read
        self._make = make
        self._current: VersionedLexicon | None = None
        self._builds = 0
        self._failures = 0
        self._state = threading.Condition()
        self._building = False
        self._again = False
        self._one_builder = threading.Lock()

    @property
    def current(self) -> VersionedLexicon | None:
        """The last complete lexicon and the version it was built for (None before the first)."""
        return self._current

    @property
    def lexicon(self) -> Lexicon | None:
        """The last complete lexicon (what a search uses)."""
        current = self._current
        return current.lexicon if current is not None else None

    @property
    def builds(self) -> int:
        """Lexicons built so far (a search never adds to it)."""
        return self._builds

    @property
    def failures(self) -> int:
        """Background builds that failed (logged; searches kept the previous lexicon)."""
        return self._failures

    def follow(self, version: str, now: bool = False) -> None:
        """Make ``version`` (just committed) current unless it is: ``now`` (or when there is no
        lexicon yet) in the caller's thread, else in the background."""
        current = self._current
        if current is not None and current.version == version:
            return
        if now or current is None:
            self.build()
        else:
            self.build_soon()

    def build(self) -> VersionedLexicon:
        """Build the committed version's lexicon now, in the caller's thread (unless it is current)."""
        with self._one_builder:
            version, vocabulary = self._read()
            current = self._current
            if current is not None and current.version == version:
                return current
            built = VersionedLexicon(version, self._make(vocabulary))
            self._current = built  # one assignment: readers see the old lexicon or this one
            self._builds += 1
            log.debug("lexicon_built", version=version)
            return built

    def build_soon(self) -> None:
        """Build the committed version's lexicon in a background thread; one thread at a time, a
        request made during a build runs once more after it."""
        with self._state:
            if self._building:
                self._again = True
                return
            self._building = True
        threading.Thread(target=self._run, name="lexicon-builder", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                self.build()
            except Exception:  # a background build must not die silently: logged and counted
                self._failures += 1
                log.exception("lexicon_build_failed")
            with self._state:
                if not self._again:
                    self._building = False
                    self._state.notify_all()
                    return
                self._again = False

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no background build is running or pending; False on timeout."""
        with self._state:
            return self._state.wait_for(lambda: not self._building, timeout)
