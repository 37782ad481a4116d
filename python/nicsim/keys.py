"""Keys a user gives on the command line or in Python, and the rules for their values.

This module owns what a given value is before it reaches a scenario: a
command-line value parsed as TOML (:func:`parse_value`), the bound on how
deep a value nests (:data:`MAX_DEPTH`, :func:`check_depth`), the dotted
keys a value sets (:func:`leaf_keys`), and the one rule for a key given
twice, by any route: refused, naming both sources (:func:`check_once`),
with a note for each value of a scenario file that a given one replaces
(:func:`replaced`). Building the scenario itself is :mod:`nicsim.scenario`'s.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from nicsim._core import NicsimError

__all__ = [
    "MAX_DEPTH",
    "Given",
    "check_depth",
    "check_once",
    "deep_statement",
    "leaf_keys",
    "overlap",
    "parse_given",
    "parse_sets",
    "parse_value",
    "replaced",
]

#: The deepest a scenario value may sit: the parts of its dotted key plus
#: the lists and tables around it. A scenario's deepest keys have 4 or 5
#: (``platform.emo.layer[0].cycles``); the bound keeps a mistaken value
#: (``foo = [[[[...]]]]``, a 1,000-part dotted key) from recursing through
#: the TOML parser and every copy, and stays below what the core's parser
#: takes (80 levels).
MAX_DEPTH = 32
_ALLOWED_DEPTH = f"allowed: at most {MAX_DEPTH} levels"

#: The deepest TOML text handed to the TOML parser: it recurses about three
#: frames per level of inline table, so deeper text is refused from a scan
#: (:func:`deep_statement`) and never parsed. Text between :data:`MAX_DEPTH`
#: and this is parsed, so the error names the whole path of the deep value.
PARSER_DEPTH = 2 * MAX_DEPTH


_TOKEN = re.compile(r"[\n#\"'=\[\]{}]")


def _skip_string(text: str, i: int) -> int:
    """Return the index just past the TOML string that starts at ``text[i]``."""
    quote = text[i]
    if text.startswith(quote * 3, i):
        end = text.find(quote * 3, i + 3)
        return len(text) if end < 0 else end + 3
    i += 1
    while i < len(text) and text[i] not in (quote, "\n"):
        i += 2 if quote == '"' and text[i] == "\\" else 1
    return i + 1


def deep_statement(text: str, limit: int = MAX_DEPTH) -> tuple[int, str] | None:
    r"""Find the first statement of TOML text whose lists or tables nest deeper than ``limit``.

    A scan of the text, strings and comments skipped, made before the TOML
    parser reads it: the parser recurses once per level, so text nested
    hundreds deep must never reach it. Returns (line, key as written) or
    ``None``; text with at most ``limit`` brackets and braces is not scanned.

    Examples
    --------
    >>> deep_statement("a = 1\nb = " + "[" * 40 + "]" * 40)
    (2, 'b')
    >>> deep_statement("s = '" + "[" * 40 + "'") is None
    True
    """
    if sum(text.count(char) for char in "[{") <= limit:
        return None
    depth, line, i = 0, 1, 0
    start, start_line = 0, 1
    key, key_line = "", 1
    while (token := _TOKEN.search(text, i)) is not None:
        i = token.start()
        char = text[i]
        if char == "\n":
            line += 1
            if depth == 0:
                start, start_line = i + 1, line
        elif char == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif char in "\"'":
            end = _skip_string(text, i)
            line += text.count("\n", i, end)
            i = end
            continue
        elif char == "=" and depth == 0:
            key, key_line = text[start:i].strip(), start_line
        elif char in "[{":
            depth += 1
            if depth > limit:
                return key_line, key
        else:
            depth = max(depth - (char in "]}"), 0)
        i += 1
    return None


def _show_key(parts: Sequence[str | int]) -> str:
    """Return a key path as written (``a.b[0].c``), cut after 60 characters."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        if len(text) > 60:
            return f"{text[:60]}…"
    return text


def _too_deep(value: Any, prefix: list[str | int], limit: int) -> list[str | int] | None:
    """Return the path to a value nested deeper than ``limit`` inside ``value``, or ``None``.

    ``prefix`` is the path to ``value`` itself (its parts count). Iterative,
    and it stops at ``limit``, so a value of any depth (or one that contains
    itself) is measured without recursion.
    """
    stack: list[tuple[Any, list[str | int]]] = [(value, prefix)]
    while stack:
        item, path = stack.pop()
        if len(path) > limit:
            return path
        if isinstance(item, Mapping):
            stack.extend((v, [*path, str(k)]) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((v, [*path, i]) for i, v in enumerate(item))
    return None


def check_depth(value: Any, key: str, where: str = "") -> None:
    """Raise :class:`NicsimError` if ``value`` at ``key`` nests deeper than :data:`MAX_DEPTH`.

    The message names the key as written (cut after 60 characters) and the
    bound; ``where`` (e.g. ``"scenario file 'a.toml': "``) goes first.

    Examples
    --------
    >>> check_depth({"delay_us": 0}, "nic")
    >>> check_depth([[[[0]]]] , "workload.x")
    >>> check_depth(0, ".".join(["a"] * 40))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: `a.a.a...` nests more than 32 levels (allowed: at most 32 levels ...)
    """
    prefix: list[str | int] = list(key.split(".")) if key else []
    path = _too_deep(value, prefix, MAX_DEPTH)
    if path is not None:
        raise NicsimError(
            f"{where}`{_show_key(path)}` nests more than {MAX_DEPTH} levels "
            f"({_ALLOWED_DEPTH} of dotted-key parts, tables and lists)"
        )


def parse_value(text: str, key: str = "value") -> Any:
    """Parse a command-line value of ``key`` as TOML, falling back to a bare string.

    Raises :class:`NicsimError` naming ``key`` if the value nests lists or
    tables deeper than :data:`MAX_DEPTH`.

    Examples
    --------
    >>> parse_value("75"), parse_value("false"), parse_value("[1, 2]"), parse_value("openmx")
    (75, False, [1, 2], 'openmx')
    >>> parse_value("[" * 500 + "]" * 500, "nic.delay_us")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: `nic.delay_us` nests more than 32 levels (allowed: ...)
    """
    too_deep = deep_statement(text, PARSER_DEPTH) is not None
    try:
        if not too_deep:
            value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        too_deep = True
    if too_deep:
        raise NicsimError(
            f"`{_show_key(key.split('.'))}` nests more than {MAX_DEPTH} levels "
            f"({_ALLOWED_DEPTH} of dotted-key parts, tables and lists)"
        ) from None
    check_depth(value, key)
    return value


@dataclass(frozen=True)
class Given:
    """One value given for a scenario key, and how the user gave it.

    ``source`` is the words that gave it, as the user wrote them
    (``--coalescing openmx``, ``--set nic.delay_us=25``,
    ``nic={'coalescing': 'openmx'}``): errors and notes quote it.
    """

    path: str
    value: Any
    source: str


def leaf_keys(path: str, value: Any) -> list[str]:
    """Return the dotted keys of the values that setting ``path`` to ``value`` sets.

    A table value is merged into the table at ``path`` (:meth:`Scenario.set`),
    so it sets its leaves, not ``path`` as a whole; an empty one sets nothing.
    Iterative, and bounded by the depth :func:`check_depth` allows.

    Examples
    --------
    >>> leaf_keys("nic", {"coalescing": "openmx", "host0": {"frames": 6}})
    ['nic.coalescing', 'nic.host0.frames']
    >>> leaf_keys("nic.delay_us", 5), leaf_keys("nic", {})
    (['nic.delay_us'], [])
    """
    leaves: list[str] = []
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((f"{key}.{k}", v) for k, v in reversed(list(item.items())))
        else:
            leaves.append(key)
    return leaves


def _inside(key: str, other: str) -> bool:
    """Whether ``key`` is ``other`` or one of the keys of the table ``other``."""
    return key == other or key.startswith(f"{other}.")


def overlap(a: str, b: str) -> str | None:
    """Return the key both dotted keys set (the longer one) if one holds the other, else ``None``.

    Examples
    --------
    >>> overlap("nic", "nic.delay_us"), overlap("nic.delay_us", "nic.delay"), overlap("a.b", "a.b")
    ('nic.delay_us', None, 'a.b')
    """
    if _inside(a, b):
        return a
    if _inside(b, a):
        return b
    return None


def check_once(given: Sequence[Given]) -> None:
    """Refuse a key given twice among ``given``, by any route, naming both sources.

    A key is given twice when two items set the same leaf or one sets a
    table that holds the other's key: ``--set nic.coalescing=openmx`` and
    ``--set nic={coalescing="disabled"}`` as much as a flag and a
    ``--set`` of its key. Which one should win is not guessed: the error
    asks for the key once.

    Examples
    --------
    >>> check_once([Given("nic.delay_us", 5, "--delay-us 5"), Given("seed", 3, "--seed 3")])
    >>> check_once([
    ...     Given("nic.coalescing", "openmx", "--coalescing openmx"),
    ...     Given("nic", {"coalescing": "disabled"}, "--set nic={coalescing='disabled'}"),
    ... ])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: nic.coalescing given twice: --coalescing openmx and --set nic=...; give it once
    """
    seen: list[tuple[str, Given]] = []
    for item in given:
        check_depth(item.value, item.path)
        for leaf in leaf_keys(item.path, item.value):
            for earlier, first in seen:
                both = overlap(leaf, earlier)
                if both is not None:
                    raise NicsimError(
                        f"{both} given twice: {first.source} and {item.source}; give it once"
                    )
        seen.extend((leaf, item) for leaf in leaf_keys(item.path, item.value))


def replaced(data: Mapping[str, Any], given: Sequence[Given], what: str) -> list[str]:
    """Say which values of ``data`` (a scenario file's, ``what`` names it) ``given`` replaces.

    One line per replaced value, e.g. ``--set nic.delay_us=500 replaces
    nic.delay_us = 25 of scenario file 'sc.toml'``: a flag or a ``--set``
    over a scenario file is how a file is varied, and the command prints
    what it changed.

    Examples
    --------
    >>> replaced({"nic": {"delay_us": 25}}, [Given("nic.delay_us", 5, "--delay-us 5")], "sc.toml")
    ['--delay-us 5 replaces nic.delay_us = 25 of sc.toml']
    """
    lines = []
    for item in given:
        for leaf in leaf_keys(item.path, item.value):
            at: Any = data
            for part in leaf.split("."):
                at = at.get(part) if isinstance(at, Mapping) else None
            if at is not None:
                lines.append(f"{item.source} replaces {leaf} = {_short(at)} of {what}")
    return lines


def _short(value: Any) -> str:
    """Return a value as a note shows it: its TOML-like text, cut after 40 characters."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else f"{text[:40]}…"


def parse_given(
    items: Sequence[str], option: str = "--set", example: str = "nic.delay_us=25"
) -> list[Given]:
    """Parse ``key.path=value`` command-line items into :class:`Given` values, unchecked.

    Raises :class:`NicsimError` naming the item for a malformed one.

    Examples
    --------
    >>> parse_given(["nic.delay_us=25"])
    [Given(path='nic.delay_us', value=25, source='--set nic.delay_us=25')]
    """
    given = []
    for item in items:
        path, eq, text = item.partition("=")
        path = path.strip()
        if not eq or not path or not text.strip():
            raise NicsimError(f"{option} {item!r}: expected key.path=value, e.g. {example}")
        given.append(
            Given(path, parse_value(text.strip(), path), f"{option} {path}={text.strip()}")
        )
    return given


def parse_sets(
    items: Sequence[str], option: str = "--set", example: str = "nic.delay_us=25"
) -> list[tuple[str, Any]]:
    """Parse ``key.path=value`` command-line items, each key at most once.

    Raises :class:`NicsimError` naming the item for a malformed one, and the
    key for one given twice, by a dotted key or inside a table
    (:func:`check_once`: the second would silently win).

    Examples
    --------
    >>> parse_sets(["nic.delay_us=25", "host.wait=poll"])
    [('nic.delay_us', 25), ('host.wait', 'poll')]
    >>> parse_sets(["nic.delay_us=0", "nic.delay_us=25"])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: nic.delay_us given twice: --set nic.delay_us=0 and --set nic.delay_us=25; ...
    """
    given = parse_given(items, option, example)
    check_once(given)
    return [(item.path, item.value) for item in given]
