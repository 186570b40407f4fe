"""msgspec's ``ValidationError`` as the gateway's ``RequestError``, for the request bodies converted with
msgspec: chat (``gateway.web.chat_schema``), ``/v1/retrieve`` and the check-only body of ``/v1/verify``
and the ``verify`` CLI (``gateway.checkonly.inputs``).

msgspec names the place of an error only in its message (``Expected `str`, got `int` - at `$.url```);
``convert`` reads it back and joins it to the param of the value converted (``sources[1]`` and ``$.url``
give ``sources[1].url``), and the caller says what the error at that place is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from gateway.errors import RequestError

_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")


def convert(value: Any, type_: Any, param: str, refuse: Callable[[str], RequestError]) -> Any:
    """``value`` (found at ``param``) as ``type_``; if it does not fit, the RequestError ``refuse`` builds
    for the place msgspec names (``param`` itself, or a place inside it)."""
    try:
        return msgspec.convert(value, type_)
    except msgspec.ValidationError as err:
        at = _AT.search(str(err))
        raise refuse(param + (at["path"] if at else "")) from None
