"""OwlTUI's performance tricks, all listed here: what each buys, as measured, and the bench that shows it.

A trick is code that does something the plain way would not, for speed alone: a stub in
``sys.modules``, an unusual way to build an object, a reach into a library's internals. The
process-wide ones live here and ``apply`` runs them, first thing in ``owltui.cli.main``; the others
must sit beside the code they speed up and are only listed. Each was measured on and off
(``bench/tricks.py``: alternating runs, the median of off/on with its spread; start-up gains also as
instructions counted by callgrind, ``--instructions``, since wall times on this 2-core machine
spread by ±30 %), CPython 3.11, .pyc files present; the start-up figures are for ``owltui -p`` up
to its first request (about 1,310 M instructions, 300-400 ms here). A trick whose gain was under
its upkeep was removed; those are listed last.

Here:

- ``no_httpx_cli``: httpx's own command-line client (click, rich.console, pygments) is not
  imported: 190 M instructions, 14.5 % of start-up; wall 1.27x (spread 0.96-1.57x, 30 pairs),
  55-75 ms.
- ``no_pydantic_plugins``: no entry-point scan for pydantic plugins: 38.5 M instructions, 2.9 % of
  start-up, about 8 ms (5 ms importing ``importlib.metadata``, 3 ms reading every installed
  distribution's entry points); too small for wall times to show (1.01x, spread 0.80-1.54x). Kept:
  ten lines, and a pydantic that changes what it takes from the stubbed module fails every test
  that starts the CLI.

Elsewhere:

- ``owltui/providers/sse_json.py``, ``loads``: the C scanner behind ``json.loads`` without its
  wrapper layers, once per stream event: 1.31x per event on a Chat Completions text stream
  (spread 0.84-1.72x, about 1.0 µs of 4.1 µs per event), 1.40x in the Anthropic parser on tool
  arguments (spread 0.91-1.49x, 0.86 µs of 2.2 µs).
- ``owltui/providers/http/client.py``, ``_Cookies``: a cookie jar that skips responses setting no
  cookie (httpx builds a urllib request and response for each one to let the jar look): 14 µs per
  response saved (0.37 µs against 15 µs, 30x, spread 22-44x).
- ``owltui/providers/http/stream.py``, ``verify=False`` for a plain-http model URL: with a proxy
  variable set (httpx's own transport), httpx would load the CA bundle for a server it never
  speaks TLS to: 477 M instructions, 34 % of start-up. Without a proxy the lean transport loads it
  on the first https connection only.
- ``owltui/providers/http/transport.py``, ``LeanTransport``: the transport under httpx, llhttp in
  place of httpcore and h11 (``bench/http_transports.py``, 300 requests of 23 KB, medians of 3
  alternating runs): 276 µs of CPU per request against httpcore's 933 µs (0.30x), 4.3 µs per
  stream event against 13.0 µs.
- ``defer_build`` on the agent's models (``owltui/agent/messages.py``, ``owltui/agent/events.py``):
  a schema is built on its model's first use, not at import: 21 M instructions, 1.6 % of start-up;
  public pydantic configuration, no upkeep.
- ``owltui/ui/control/lifecycle.py``, ``gc.freeze`` once the TUI has started: the start-up objects
  leave the collector's reach, so no full collection walks them mid-stream (a 50-70 ms hitch,
  ``bench/tui_latency.py``; not measured again here).

Removed, measured:

- text and thinking deltas built by hand (``object.__new__`` and ``__dict__`` written directly):
  270 ns saved per delta, but the parsers join the deltas of one network read into one event, so a
  40,000-event stream builds one per read, a few hundred: 1.04x per event (spread 0.68-1.46x,
  15 pairs), within the noise. The parsers build them as ``TextDelta(text=...)``.
- ``ToolCallDelta.model_construct`` and ``ThinkingDelta.model_construct`` in the Anthropic parser:
  slower than validation (3.0 µs against 1.0 µs per object): with the plain constructors the
  parser's tool-argument events cost 0.68x (spread 0.54-0.84x, 10 pairs; 4.6 to 3.5 µs per event).
"""

from __future__ import annotations

import sys
import types


def no_pydantic_plugins() -> None:
    """pydantic looks for plugins in every installed distribution's entry points (importlib.metadata,
    email, zipfile) the first time it builds a validator; OwlTUI uses none, so the answer "none" is
    given without the scan. Not via ``PYDANTIC_DISABLE_PLUGINS``: every process a tool starts would
    inherit it."""
    name = "pydantic.plugin._loader"
    if name not in sys.modules:
        stub = types.ModuleType(name, "OwlTUI: no pydantic plugins (see owltui._startup)")
        stub.get_plugins = tuple  # type: ignore[attr-defined]  # get_plugins() -> ()
        sys.modules[name] = stub


def no_httpx_cli() -> None:
    """httpx imports its own command-line client (click, rich.console, pygments) when they are
    installed; a ``None`` in ``sys.modules`` makes that import fail, and httpx then keeps its
    documented fallback (``httpx.main`` says the CLI is unavailable). OwlTUI never runs it."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]


def apply() -> None:
    """The process-wide tricks, before anything imports pydantic's validators or httpx."""
    no_pydantic_plugins()
    no_httpx_cli()
