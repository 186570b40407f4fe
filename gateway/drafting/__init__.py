"""Drafting: a cited answer from numbered passages (the citation contract over a chat model; extractive)."""
