"""Reading cited web pages safely (SSRF-proof, allow-listed, bounded): ``fetcher.SafeFetcher``.

``result`` (what a fetch gave, and the bounded reasons), ``addresses`` (which hosts and addresses may
be fetched from, the resolver), ``cache`` (the fetcher's TTL cache), ``extraction`` (page text from
HTML or plain text) and ``fetcher`` (the gate every request and redirect hop goes through).
"""
