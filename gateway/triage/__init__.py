"""Triage: scope, emergency and urgency of a message before anything is retrieved (docs/safety.md)."""
