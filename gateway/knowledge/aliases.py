"""Other names the knowledge base itself gives its topics, mined from its passages at indexing time.

Vetted sources name the everyday or older word beside the clinical one: dumping syndrome "is also
called rapid gastric emptying", Hashimoto's disease "chronic lymphocytic thyroiditis", "chronic
myelomonocytic leukemia (CMML)". A patient writes the other name; the sections about the topic (their
titles above all) use the clinical one. Two patterns, no word list, so any operator's corpus yields
its own table:

* ``<clause>, also called|also known as|sometimes called|formerly called <alias>``: kept only when the
  clause before names the passage's document title (a content word of the title in it) or is "this
  condition|disease|...": the alias then names the title's topic;
* ``<long form> (<ACRONYM>)`` where the acronym's letters are the initials of the words before it
  (Schwartz & Hearst 2003, simplified): the acronym names the long form.

Mining runs as the BM25 index adds a passage (``lexical.mine_aliases``; the index keeps each live
passage's pairs, ``LexicalIndex.vocabulary`` collects them). The query planner adds the named
topic's words to the BM25 text of a message holding the alias (query.py), never to the dense text;
an acronym is matched when the message writes it in capitals, or as it is when it is no ordinary
English word.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from gateway.knowledge.lexical import MAX_ALIAS_WORDS, STOPWORDS, content_terms, mine_aliases, surface_tokens
from gateway.knowledge.synonyms import key_forms

__all__ = ["AliasTable", "mine_aliases"]

_QUERY_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


class AliasTable:
    """The mined aliases of an index (``Vocabulary.aliases``), each with the words it adds to a query.

    What an alias names is a title ("What are the treatments for Dumping Syndrome ?") or an acronym's
    long form. Its words are kept when they name the topic: not a stop word, not a word of more than
    ``template_share`` of all named titles (the titles' question wording: "treatments", "causes"),
    and, when an alias names several things, in at least half of them (an alias naming unrelated
    topics adds nothing). An alias whose rarest word is in more than ``max_alias_share`` of the
    passages is too common to stand for one topic; a target of more than ``max_words`` topic words is
    a page title, not a name. An alias that is itself the wording of a title (``titles``) is left
    alone: the knowledge base has pages under that name ("Batten disease", also the group name of
    "Kufs disease").
    """

    def __init__(
        self,
        aliases: Mapping[str, Sequence[str]],
        dictionary: frozenset[str] = frozenset(),
        template_share: float = 0.02,
        max_targets: int = 5,
        share: Callable[[str], float] | None = None,
        max_alias_share: float = 0.005,
        max_words: int = 4,
        titles: Iterable[str] = (),
    ) -> None:
        targets = {t for named in aliases.values() for t in named}
        titled: set[tuple[str, ...]] = set()
        for title in titles:  # every run of up to MAX_ALIAS_WORDS words of a title
            form = key_forms(title)
            titled.update(
                tuple(form[i:j])
                for i in range(len(form))
                for j in range(i + 1, min(len(form), i + MAX_ALIAS_WORDS) + 1)
            )
        counts: Counter[str] = Counter(term for t in targets for term in content_terms(t))
        common = {term for term, n in counts.items() if n > max(2.0, template_share * len(targets))}
        self._dictionary = dictionary
        self._words: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._acronyms: set[tuple[str, ...]] = set()
        for alias, named in aliases.items():
            chosen = list(named)[:max_targets]
            votes: Counter[str] = Counter()
            surfaces: dict[str, str] = {}
            for target in chosen:
                for term, surface in {t: w for w, t in surface_tokens(target)}.items():
                    if term not in common and len(surface) > 2 and not surface.isdigit():
                        votes[term] += 1
                        surfaces.setdefault(term, surface)
            words = tuple(surfaces[t] for t, n in votes.items() if 2 * n >= len(chosen))
            form = key_forms(alias)
            terms = [t for _, t in surface_tokens(alias)]
            if share is not None and terms and min(share(t) for t in terms) > max_alias_share:
                continue  # a common word ("the bowel") names too much to stand for one topic
            if not alias.isupper() and key_forms(alias) in titled:
                continue  # a name the knowledge base titles its own pages with needs no other
            if words and form and len(words) <= max_words:
                self._words[form] = words
                if alias.isupper():
                    self._acronyms.add(form)
        self.longest = max((len(f) for f in self._words), default=0)

    def __len__(self) -> int:
        return len(self._words)

    def expand(self, text: str) -> list[str]:
        """The words the aliases found in ``text`` add (longest alias first; none the text holds)."""
        matches = list(_QUERY_WORD.finditer(text))
        forms = key_forms(text)
        present = {term for _, term in surface_tokens(text)}
        added: list[str] = []
        i = 0
        while i < len(forms):
            for n in range(min(self.longest, len(forms) - i), 0, -1):
                form = tuple(forms[i : i + n])
                words = self._words.get(form)
                if words is not None and (
                    form not in self._acronyms or self._acronym(matches[i].group(0), form)
                ):
                    added.extend(w for w in words if not {t for _, t in surface_tokens(w)} <= present)
                    i += n
                    break
            else:
                i += 1
        return list(dict.fromkeys(added))

    def _acronym(self, written: str, form: tuple[str, ...]) -> bool:
        """An acronym is read as one when written in capitals ("MEDs" too), or as it is, in lower case,
        when that is no ordinary word ("cmml"; never "meds" for MED)."""
        lower = written.lower()
        if written.rstrip("s").isupper():
            return True
        return (
            (lower,) == form and len(lower) >= 3 and lower not in self._dictionary and lower not in STOPWORDS
        )
