"""A command's template with the typed arguments in it: ``$ARGUMENTS`` is everything after the name
as typed, ``$1``...``$9`` its words split as a shell would (quotes group words and are removed; a
word not given is empty). A template with neither gets the arguments appended on a line of their
own (``ARGUMENTS: ...``), as Claude Code does, so nothing typed is lost. ``@path`` mentions in the
result are attached by the message path like typed ones."""

from __future__ import annotations

import re
import shlex

PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


def split_arguments(arguments: str) -> list[str]:
    """Shell-like words; an unbalanced quote falls back to splitting on whitespace."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def takes_arguments(template: str) -> bool:
    return PLACEHOLDER.search(template) is not None


def expand(template: str, arguments: str) -> str:
    arguments = arguments.strip()
    words = split_arguments(arguments)

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if PLACEHOLDER.search(template) is None:
        return f"{template}\n\nARGUMENTS: {arguments}" if arguments else template
    return PLACEHOLDER.sub(value, template)
