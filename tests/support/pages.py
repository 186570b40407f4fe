"""A loopback web site for fetcher tests: real HTTP pages, redirects, big, slow and odd responses.

Routes (all GET):
    /page/{name}          an HTML article from ``PageSite.pages`` (404 when unknown)
    /text/{name}          the same article as text/plain
    /redirect/{n}         302 -> /redirect/{n-1}; /redirect/0 is the ``flu`` page
    /to?url=...           302 -> the given absolute or relative URL (open redirect, on purpose)
    /big                  an HTML body of ``PageSite.big_bytes`` streamed without Content-Length
    /big-declared         a small body that declares a huge Content-Length
    /slow                 an HTML body dripped one small chunk every ``PageSite.drip_seconds``
    /status/{code}        an empty response with that status
    /json                 application/json
    /empty                an HTML page without text
    /host                 text/plain echo of the Host header the server received

``hits`` counts requests per path so tests can see what was (not) fetched.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

from litestar import Litestar, Request, Response, get
from litestar.response import Stream

from gateway.testing import serve_in_thread

FLU_HTML = """<!doctype html><html><head><title>Flu - symptoms and treatment</title></head>
<body><nav><a href="/">Home</a> | <a href="/a-z">Health A to Z</a></nav>
<article><h1>Flu</h1>
<p>Flu symptoms usually come on very quickly and include a sudden high temperature of 38C or above.</p>
<p>Most people feel better within a week without needing to see a GP.</p>
<p>Adults can take paracetamol or ibuprofen to lower a high temperature.</p>
</article><footer>Cookie settings. Accessibility statement.</footer></body></html>"""

FLU_TEXT = (
    "Flu symptoms usually come on very quickly and include a sudden high temperature of 38C or above. "
    "Most people feel better within a week without needing to see a GP."
)

SMOKING_HTML = """<!doctype html><html><head><title>Lung cancer statistics</title></head>
<body><article><h1>Lung cancer and smoking</h1>
<p>In the study, the lifetime risk of lung cancer was 28% for men who smoked and 1% for women who
never smoked.</p><p>Stopping smoking at any age lowers the risk.</p></article></body></html>"""


class PageSite:
    def __init__(self) -> None:
        self.pages: dict[str, str] = {"flu": FLU_HTML, "smoking": SMOKING_HTML}
        self.texts: dict[str, str] = {"flu": FLU_TEXT}
        self.hits: Counter[str] = Counter()
        self.big_bytes = 200_000
        self.drip_seconds = 0.2
        self.drip_chunks = 200

    def app(self) -> Litestar:
        site = self

        def hit(request: Request[Any, Any, Any]) -> None:
            site.hits[request.url.path] += 1

        @get("/page/{name:str}")
        async def page(request: Request[Any, Any, Any], name: str) -> Response[Any]:
            hit(request)
            if name not in site.pages:
                return Response("not found", status_code=404, media_type="text/plain")
            return Response(site.pages[name], media_type="text/html; charset=utf-8")

        @get("/text/{name:str}")
        async def text(request: Request[Any, Any, Any], name: str) -> Response[Any]:
            hit(request)
            if name not in site.texts:
                return Response("not found", status_code=404, media_type="text/plain")
            return Response(site.texts[name], media_type="text/plain; charset=utf-8")

        @get("/redirect/{n:int}")
        async def redirect(request: Request[Any, Any, Any], n: int) -> Response[Any]:
            hit(request)
            location = "/page/flu" if n <= 0 else f"/redirect/{n - 1}"
            return Response(b"", status_code=302, headers={"Location": location})

        @get("/to")
        async def to(request: Request[Any, Any, Any], url: str) -> Response[Any]:
            hit(request)
            return Response(b"", status_code=302, headers={"Location": url})

        @get("/big")
        async def big(request: Request[Any, Any, Any]) -> Stream:
            hit(request)

            async def body() -> AsyncIterator[bytes]:
                yield b"<html><body><p>"
                sent = 0
                while sent < site.big_bytes:
                    yield b"x" * 8192
                    sent += 8192
                yield b"</p></body></html>"

            return Stream(body(), media_type="text/html")

        @get("/big-declared")
        async def big_declared(request: Request[Any, Any, Any]) -> Response[Any]:
            hit(request)
            return Response(b"<p>small</p>", media_type="text/html", headers={"Content-Length": str(10**9)})

        @get("/slow")
        async def slow(request: Request[Any, Any, Any]) -> Stream:
            hit(request)

            async def body() -> AsyncIterator[bytes]:
                for _ in range(site.drip_chunks):
                    yield b"<p>drip</p>"
                    await asyncio.sleep(site.drip_seconds)

            return Stream(body(), media_type="text/html")

        @get("/status/{code:int}")
        async def status(request: Request[Any, Any, Any], code: int) -> Response[Any]:
            hit(request)
            return Response(b"", status_code=code)

        @get("/json")
        async def as_json(request: Request[Any, Any, Any]) -> Response[Any]:
            hit(request)
            return Response({"text": "Flu lasts a week."}, media_type="application/json")

        @get("/empty")
        async def empty(request: Request[Any, Any, Any]) -> Response[Any]:
            hit(request)
            return Response("<html><head></head><body>   </body></html>", media_type="text/html")

        @get("/host")
        async def host(request: Request[Any, Any, Any]) -> Response[Any]:
            hit(request)
            return Response(f"Host header was {request.headers.get('host')}.", media_type="text/plain")

        return Litestar(
            [page, text, redirect, to, big, big_declared, slow, status, as_json, empty, host], debug=False
        )


@contextmanager
def running_site() -> Iterator[tuple[PageSite, str]]:
    """Serve a PageSite on 127.0.0.1; yields it and its base URL."""
    site = PageSite()
    with serve_in_thread(site.app()) as url:
        yield site, url
