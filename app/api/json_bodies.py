"""Large JSON request bodies are decoded and validated in a worker thread, in a way that lets the event loop run.

FastAPI decodes a JSON body with `json.loads` on the event loop, then validates it there too. Moving that call to
a thread alone does not help: `json.loads` is one C call that holds the GIL until it returns (measured: 4 MiB of
small numbers stop every other thread for 140 ms, the whole decoding time). So a body of OFF_LOOP_BYTES or more is
decoded with the json module's pure-Python scanner, which gives the GIL up every few milliseconds (measured: the
event loop waits at most 11-18 ms at a time, for 4 MiB taking 0.14-2.2 s of the thread), and then validated in the
same thread against the endpoint's body model (its Python validators give the GIL up too); FastAPI then finds the
validated models and only checks their types. A body that fails validation is handed back as decoded, for FastAPI
to report its errors as usual. Smaller bodies are decoded as before: they take a few milliseconds at most.

The limits in `app/api/limits.py` bound how big a body can be (1 MiB but for an organiser's bulk requests).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, params
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

OFF_LOOP_BYTES = 128 * 1024  # smaller bodies decode on the loop in a few milliseconds at most


def decode_json(body: bytes) -> Any:
    """`json.loads(body)`, decoded by the pure-Python scanner so that other threads get the GIL meanwhile."""
    decoder = json.JSONDecoder()  # one per call: the pure-Python scanner keeps a memo while it runs
    # typeshed leaves out CPython's pure-Python scanner (json.decoder.py_scanstring, json.scanner.py_make_scanner,
    # the decoder's scan_once), which is json's own fallback when its C scanner is missing
    decoder.parse_string = json.decoder.py_scanstring  # type: ignore[attr-defined]  # not in typeshed
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]  # not in typeshed
    return decoder.decode(body.decode(json.detect_encoding(body), "surrogatepass"))


def decode_and_validate(body: bytes, field: Any | None) -> Any:
    """The decoded body, validated against the endpoint's body `field` when it passes (else as decoded)."""
    value = decode_json(body)
    if field is None:
        return value
    validated, errors = field.validate(value, {}, loc=("body",))
    return value if errors else validated


class OffLoopJSONRequest(Request):
    """A request whose large JSON body is decoded (and validated) in a worker thread."""

    body_field: Any | None = None  # set on the subclass made for each route

    async def json(self) -> Any:
        """The decoded body; large ones are decoded off the event loop."""
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) < OFF_LOOP_BYTES:
                self._json = json.loads(body)
            else:
                self._json = await run_in_threadpool(decode_and_validate, body, self.body_field)
        return self._json


class OffLoopJSONRoute(APIRoute):
    """An API route whose handler reads the request as an OffLoopJSONRequest."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """FastAPI's handler, given an OffLoopJSONRequest (with this route's body model) for each request."""
        handler = super().get_route_handler()
        single_body = self.body_field is not None and not getattr(self, "_embed_body_fields", True)
        request_class = type(
            "RouteJSONRequest", (OffLoopJSONRequest,), {"body_field": self.body_field if single_body else None}
        )

        async def handle(request: Request) -> Response:
            return await handler(request_class(request.scope, request.receive))

        return handle


def takes_json(route: APIRoute) -> bool:
    """Whether a route's body is JSON (it has one, and it is not a form)."""
    return route.body_field is not None and not isinstance(route.body_field.field_info, params.Form)


def decode_off_loop(router: APIRouter) -> None:
    """Make every route of `router` whose body is JSON an OffLoopJSONRoute (before the router is included).

    FastAPI's own hook is `APIRouter(route_class=...)`; routes made already are switched to that class, which adds
    no state, so that each router module need not know.
    """
    for route in router.routes:
        if type(route) is APIRoute and takes_json(route):
            route.__class__ = OffLoopJSONRoute
