"""The planner's lexicon is built per index version off the request path (knowledge/lexicons.py)."""

from __future__ import annotations

import threading

from gateway.knowledge.lexical import LexicalIndex, Vocabulary
from gateway.knowledge.lexicons import LexiconKeeper
from gateway.knowledge.query import Lexicon, load_planner
from gateway.resources import bundled

PLANNER = load_planner(bundled("policies"))


class Index:
    """A BM25 index and its version, as the store's read lock hands them to the keeper."""

    def __init__(self) -> None:
        self.version = "v1"
        self.index = LexicalIndex()
        self.index.add(
            "a#0", "Wobbly knee disorder, also called patellar drift.", title="Wobbly Knee Disorder"
        )

    def read(self) -> tuple[str, Vocabulary]:
        return self.version, self.index.vocabulary()

    def commit(self, version: str, rid: str, text: str, title: str) -> None:
        self.index.add(rid, text, title=title)
        self.version = version


class Gate:
    """A ``make`` that, once armed, waits in the build until released (events, no sleeps)."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail = False

    def make(self, vocabulary: Vocabulary) -> Lexicon:
        if self.armed:
            self.entered.set()
            assert self.release.wait(30)
        if self.fail:
            raise RuntimeError("vocabulary unreadable")
        return PLANNER.lexicon(vocabulary)


def test_following_a_version_builds_once_and_a_repeat_builds_nothing() -> None:
    index = Index()
    keeper = LexiconKeeper(index.read, PLANNER.lexicon)
    keeper.follow(index.version)  # no lexicon yet: built at once
    assert keeper.builds == 1
    assert keeper.current is not None
    assert keeper.current.version == "v1"
    keeper.follow(index.version)
    keeper.follow(index.version, now=True)
    assert keeper.builds == 1


def test_a_reader_during_a_background_build_keeps_the_previous_whole_lexicon() -> None:
    index, gate = Index(), Gate()
    keeper = LexiconKeeper(index.read, gate.make)
    keeper.follow(index.version)
    old = keeper.lexicon
    assert old is not None
    assert not old.indexed("kneecap")
    index.commit("v2", "b#0", "Chronic kneecap syndrome (CKNS) is rare.", "Chronic Kneecap Syndrome")
    gate.armed = True
    keeper.follow(index.version)  # in the background
    assert gate.entered.wait(30)
    assert keeper.lexicon is old
    assert keeper.current is not None
    assert keeper.current.version == "v1"
    gate.release.set()
    assert keeper.wait(30)
    new = keeper.lexicon
    assert new is not old
    assert keeper.current is not None
    assert keeper.current.version == "v2"
    assert new is not None
    assert new.indexed("kneecap")
    assert not old.indexed("kneecap")
    assert keeper.builds == 2


def test_commits_during_a_build_are_folded_into_one_more_build() -> None:
    index, gate = Index(), Gate()
    keeper = LexiconKeeper(index.read, gate.make)
    keeper.follow(index.version)
    gate.armed = True
    index.commit("v2", "b#0", "Some text.", "B")
    keeper.follow(index.version)
    assert gate.entered.wait(30)
    for n in (3, 4, 5):
        index.commit(f"v{n}", f"c{n}#0", "More text.", f"C{n}")
        keeper.follow(index.version)
    gate.release.set()
    assert keeper.wait(30)
    assert keeper.builds == 3  # the first, v2, then v5 for the three that landed meanwhile
    assert keeper.current is not None
    assert keeper.current.version == "v5"


def test_a_failed_background_build_is_counted_and_the_previous_lexicon_stays() -> None:
    index, gate = Index(), Gate()
    keeper = LexiconKeeper(index.read, gate.make)
    keeper.follow(index.version)
    old = keeper.lexicon
    gate.fail = True
    index.commit("v2", "b#0", "Some text.", "B")
    keeper.follow(index.version)
    assert keeper.wait(30)
    assert keeper.failures == 1
    assert keeper.lexicon is old
