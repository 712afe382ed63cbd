"""Why a runtime could not be built, in the terms a front end answers with: a missing API key (and
the variables that would give one), an error whose message is one sentence for the user
(configuration, the session file, the provider's set-up), or something else (a bug: its type too).

Front ends below the providers' layer (``owltui/modes``) read start failures here instead of
importing the providers' error classes.
"""

from __future__ import annotations

from owltui.providers.http.errors import MissingKeyError, ProviderError
from owltui.providers.table import PROVIDERS
from owltui.session.config import ConfigError
from owltui.session.store.file import SessionError

KEY_VARIABLES: tuple[str, ...] = tuple(i.key_env for i in PROVIDERS.values() if i.key_env)


def missing_key(exc: BaseException) -> tuple[str, ...]:
    """The variables that would give the missing key (either one), or () when that is not why."""
    return exc.variables if isinstance(exc, MissingKeyError) else ()


def for_the_user(exc: BaseException) -> bool:
    """True when ``str(exc)`` is a sentence to show the user as it is."""
    return isinstance(exc, ConfigError | SessionError | ProviderError)
