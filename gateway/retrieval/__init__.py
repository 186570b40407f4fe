"""Retrieval: the passages a question is answered from, and whether any is relevant enough."""
