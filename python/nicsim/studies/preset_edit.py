"""A preset's text with some keys set and its comments kept.

The candidates of :mod:`nicsim.studies.sensitivity` are such copies.

A preset (``presets/*.toml``) carries its sources in comments, one per
line; a copy with other values must keep them, so the copy is made on the
text: each key keeps its line, and the result is checked by parsing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping

import tomli_w

from nicsim._core import NicsimError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 fallback
    import tomli as tomllib

__all__ = ["Value", "kind_name", "lookup", "same_kind", "toml_value", "with_values"]

#: A preset key's value, as TOML holds it.
Value = bool | int | float | str


def _split(key: str) -> tuple[str, str]:
    """``"host.tick.hz"`` -> ``("host.tick", "hz")``."""
    table, _, name = key.rpartition(".")
    return table, name


def lookup(doc: Mapping[str, object], key: str) -> object:
    """Return the value of ``table.key`` in a parsed preset (``KeyError`` if absent)."""
    node: object = doc
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def same_kind(old: object, new: object) -> bool:
    """Tell whether ``new`` may replace ``old`` (an integer may replace a float)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return isinstance(old, bool) and isinstance(new, bool)
    if isinstance(old, float):
        return isinstance(new, (int, float))
    return type(old) is type(new)


def kind_name(value: object) -> str:
    """Name the kind of a TOML value for an error ("a boolean", "an integer", ...)."""
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        type(value), type(value).__name__
    )


def _value_end(line: str, start: int) -> int:
    """Index just past the TOML scalar (or one-line array) that starts at ``start``."""
    if line.startswith('"', start):
        i = start + 1
        while i < len(line) and line[i] != '"':
            i += 2 if line[i] == "\\" else 1
        return i + 1
    if line.startswith("[", start):
        depth = 0
        for i in range(start, len(line)):
            depth += {"[": 1, "]": -1}.get(line[i], 0)
            if depth == 0:
                return i + 1
    hash_at = line.find("#", start)
    end = len(line) if hash_at < 0 else hash_at
    return len(line[:end].rstrip())


_HEADER = re.compile(r"^\s*\[([A-Za-z0-9_.-]+)\]\s*(#.*)?$")
_ASSIGN = re.compile(r"^(\s*)([A-Za-z0-9_-]+)(\s*=\s*)")


def with_values(text: str, values: Mapping[str, Value]) -> str:
    r"""Return the preset ``text`` with each ``table.key`` of ``values`` set, comments kept.

    A key the preset holds keeps its line and comment, with the new value; a
    key it lacks is added at the top of its table (a table it lacks, at the
    end). The result is checked by parsing it: every other key keeps its
    value. A value of another kind than the preset's (a number for a
    boolean, say) is an error naming the key.

    Examples
    --------
    >>> text = "[nic]\nring_slots = 1024  # [estimate] slots\nflow_control = false\n"
    >>> print(with_values(text, {"nic.ring_slots": 512, "nic.flow_control": True}), end="")
    [nic]
    ring_slots = 512  # [estimate] slots
    flow_control = true
    >>> print(with_values("[host]\nx = 1\n", {"host.tick.hz": 100}), end="")
    [host]
    x = 1
    <BLANKLINE>
    [host.tick]
    hz = 100
    """
    before = tomllib.loads(text)
    for key, new in values.items():
        try:
            old = lookup(before, key)
        except KeyError:
            continue
        if not same_kind(old, new):
            raise NicsimError(
                f"preset key `{key}`: {new!r} is {kind_name(new)}; "
                f"the preset holds {kind_name(old)} ({old!r})"
            )
    lines = text.splitlines()
    pending = dict(values)
    table = ""
    header_at: dict[str, int] = {}
    for i, line in enumerate(lines):
        h = _HEADER.match(line)
        if h:
            table = h.group(1)
            header_at[table] = i
            continue
        m = _ASSIGN.match(line)
        key = f"{table}.{m.group(2)}" if m and table else ""
        if m and key in pending:
            new = pending.pop(key)
            old = lookup(before, key)
            if isinstance(old, float) and not isinstance(new, bool):
                new = float(new)
            start = m.end()
            lines[i] = line[:start] + toml_value(new) + line[_value_end(line, start) :]
    for key, new in pending.items():
        table, name = _split(key)
        entry = f"{name} = {toml_value(new)}"
        if table in header_at:
            at = header_at[table] + 1
            lines.insert(at, entry)
            header_at = {t: j + (j >= at) for t, j in header_at.items()}
        else:
            lines += ["", f"[{table}]", entry]
            header_at[table] = len(lines) - 2
    out = "\n".join(lines) + "\n"
    _check_edit(before, tomllib.loads(out), values)
    return out


def toml_value(value: Value) -> str:
    """Write ``value`` as TOML writes it after ``key = ``."""
    return tomli_w.dumps({"v": value})[4:].strip()


def _check_edit(
    before: dict[str, object], after: dict[str, object], values: Mapping[str, Value]
) -> None:
    """Fail unless ``after`` is ``before`` with exactly ``values`` set."""
    expected = tomllib.loads(tomli_w.dumps(before))
    for key, value in values.items():
        node = expected
        *tables, name = key.split(".")
        for part in tables:
            node = node.setdefault(part, {})
        old = node.get(name)
        node[name] = (
            float(value) if isinstance(old, float) and not isinstance(value, bool) else value
        )
    if after != expected:
        raise NicsimError(f"setting {', '.join(values)} in the preset changed other keys")
