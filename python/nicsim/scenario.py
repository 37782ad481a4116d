"""Scenario building: Python values to the TOML text that ``nicsim._core.run`` reads.

This module owns the shape of a scenario on the Python side (sections, dotted
key paths, overrides, loading files). It does not validate keys or values:
the Rust core does that, and its :class:`~nicsim.NicsimError` names the key.
Two top-level values are checked here because Python uses them itself: the
seed (also the base of derived seeds, :func:`check_seed`) and the pcap path.
"""

from __future__ import annotations

import copy
import datetime
import numbers
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from nicsim import _core
from nicsim._core import DEFAULT_PRESET, SEED_LIMIT, NicsimError
from nicsim.keys import (
    _ALLOWED_DEPTH,
    MAX_DEPTH,
    PARSER_DEPTH,
    Given,
    _short,
    _show_key,
    check_depth,
    check_once,
    deep_statement,
    leaf_keys,
    overlap,
    parse_given,
    parse_sets,
    parse_value,
    replaced,
)

__all__ = [
    "DEFAULT_SEED",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "SECTIONS",
    "Given",
    "Scenario",
    "check_once",
    "check_preset_file",
    "check_seed",
    "is_preset_file",
    "leaf_keys",
    "overlap",
    "parse_given",
    "parse_sets",
    "parse_value",
    "preset_path",
    "read_toml_file",
    "replaced",
]

#: The tables of a scenario file, in the order they are written.
SECTIONS: tuple[str, ...] = ("platform", "nic", "host", "protocol", "workload")

#: The largest scenario file read, in bytes: a scenario is a few hundred
#: bytes, a preset 5 to 14 KiB; the bound keeps a mistaken path (a log, a
#: disk image) from being read whole. The core reads preset files under the
#: same bound (``MAX_FILE_BYTES`` in ``crates/nicsim/src/config/mod.rs``).
MAX_FILE_BYTES = 1 << 20

_ALLOWED_FILE = f"allowed: a regular TOML file of at most {MAX_FILE_BYTES >> 10} KiB"


def loads(text: str, what: str) -> dict[str, Any]:
    """Parse TOML text (``what`` names it in errors: ``"scenario"``, a file) into plain data.

    Raises :class:`NicsimError`, one line, for invalid TOML and for a value
    nested deeper than :data:`MAX_DEPTH` (naming its key), whether the TOML
    parser reads it or not.
    """
    found = deep_statement(text, PARSER_DEPTH)
    try:
        if found is None:
            data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise NicsimError(f"{what} is not valid TOML: {err}") from None
    except RecursionError:
        found = (0, "")
    if found is not None:
        where = f"line {found[0]}: `{_show_key([found[1]])}`" if found[0] else "a value"
        raise NicsimError(
            f"{what}: {where} nests more than {MAX_DEPTH} levels "
            f"({_ALLOWED_DEPTH} of dotted-key parts, tables and lists)"
        ) from None
    check_depth(data, "", f"{what}: ")
    return data


def _file_kind(mode: int) -> str:
    """Name, in words, what a file that is not a regular file is."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def read_toml_file(path: str | os.PathLike[str], what: str) -> str:
    """Read a configuration file: a regular file of at most :data:`MAX_FILE_BYTES` of UTF-8.

    Anything else is refused before it is read, with a :class:`NicsimError`
    naming ``what`` (e.g. ``"scenario file"``), the path and what it is: a
    FIFO (opening one waits for a writer), a device (``/dev/zero`` never
    ends), a directory, or a bigger file. The read stops one byte past the
    bound, for files whose size the file system does not know.

    Examples
    --------
    >>> read_toml_file("/dev/zero", "scenario file")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: scenario file '/dev/zero' is a character device (allowed: ...)
    """
    name = os.fspath(path)
    try:
        info = os.stat(name)
        if not stat.S_ISREG(info.st_mode):
            raise NicsimError(f"{what} {name!r} is {_file_kind(info.st_mode)} ({_ALLOWED_FILE})")
        if info.st_size > MAX_FILE_BYTES:
            raise NicsimError(f"{what} {name!r} is {info.st_size} bytes ({_ALLOWED_FILE})")
        with open(name, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise NicsimError(f"cannot read {what} {name!r}: {err.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise NicsimError(
            f"{what} {name!r} holds more than {MAX_FILE_BYTES} bytes ({_ALLOWED_FILE})"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise NicsimError(
            f"{what} {name!r} is not UTF-8 text (byte {err.start}: {data[err.start]:#04x}; "
            f"{_ALLOWED_FILE})"
        ) from None


def is_preset_file(preset: str) -> bool:
    """Whether the core reads ``preset`` as a file: it ends in ``.toml`` or holds a ``/``.

    Examples
    --------
    >>> is_preset_file("omx2009"), is_preset_file("mine.toml"), is_preset_file("./mine")
    (False, True, True)
    """
    return preset.endswith(".toml") or "/" in preset


def preset_path(preset: object) -> str | None:
    """Return ``preset`` as a path if the core reads it as a file, else ``None`` (a name).

    An output of a command must not name it (:func:`nicsim.outputs.check_apart`).

    Examples
    --------
    >>> preset_path("omx2009"), preset_path(Path("mine.toml"))
    (None, 'mine.toml')
    """
    if not isinstance(preset, str | os.PathLike):
        return None
    name = os.fspath(preset)
    return name if isinstance(name, str) and is_preset_file(name) else None


def check_preset_file(preset: object) -> None:
    """Check a preset given as a file before the core reads it, as scenario files are checked.

    A preset is a file as :func:`is_preset_file` tells. A regular file of at
    most :data:`MAX_FILE_BYTES` is parsed as :func:`loads` parses a
    scenario, so a value nested deeper than :data:`MAX_DEPTH` is a one-line
    :class:`NicsimError` naming the file and the key. Anything else (a name,
    a path to nothing, a device, a bigger file) is left to the core, which
    names the presets and files it takes.

    Examples
    --------
    >>> import tempfile
    >>> deep = Path(tempfile.mkdtemp()) / "deep.toml"
    >>> _ = deep.write_text("a = " + "[" * 600 + "]" * 600)
    >>> check_preset_file(str(deep))  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: preset file '.../deep.toml': line 1: `a` nests more than 32 levels (...)
    """
    if not isinstance(preset, str | os.PathLike):
        return
    name = os.fspath(preset)
    if not is_preset_file(name):
        return
    try:
        info = os.stat(name)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
        loads(read_toml_file(name, "preset file"), f"preset file {name!r}")


def _empty() -> dict[str, Any]:
    return {}


@dataclass
class Scenario:
    """A simulation scenario: a preset plus per-section overrides.

    Every field mirrors a key or table of the scenario TOML file; anything
    left empty takes the preset's value. ``to_toml`` gives the text the core
    runs.

    Parameters
    ----------
    workload
        ``[workload]`` table; ``kind`` (required by the core) is one of
        ``pingpong`` (the default here), ``stream``, ``uniband``, ``flood``,
        ``nas-is``, ``nas-cg``, ``nas-mg``, ``nas-ft``, ``nas-bt``, ``nas-ep``,
        ``nas-lu``, ``nas-sp``, ``alltoall``,
        ``exchange``, ``bcast``, ``asp``, ``qr``, ``fft-alltoall``,
        ``echo-nic``, ``echo-kernel``, or with an LCI preset and the LCI
        stack ``stream``, ``pingpong``, ``bcast`` (the [LCI] broadcast
        benchmark), ``asp``, ``qr``, ``dsm``, ``fft-alltoall``. One table
        for every stack: the per-element costs of ``asp`` and ``qr`` are
        ``elem_cycles``, ``norm_cycles`` and ``update_cycles`` on each.
    preset
        Embedded preset name (see :func:`nicsim.presets`) or a preset file
        path; default ``nicsim._core.DEFAULT_PRESET`` (``"omx2009"``).
    seed
        Base seed of every random choice in the run: ``0 <= seed < 2**63``.
    pcap
        If set, write every simulated frame to this pcap file (a path).
    platform, nic, host, protocol
        Overrides of the matching tables.

    Examples
    --------
    >>> s = Scenario(workload={"kind": "stream", "size_bytes": 128})
    >>> _ = s.set("nic.coalescing", "openmx").set("host.sleep", False)
    >>> print(s.to_toml())
    preset = "omx2009"
    seed = 1
    <BLANKLINE>
    [nic]
    coalescing = "openmx"
    <BLANKLINE>
    [host]
    sleep = false
    <BLANKLINE>
    [workload]
    kind = "stream"
    size_bytes = 128
    <BLANKLINE>
    """

    workload: dict[str, Any] = field(default_factory=lambda: {"kind": "pingpong"})
    preset: str = DEFAULT_PRESET
    seed: int = 1
    pcap: str | None = None
    platform: dict[str, Any] = field(default_factory=_empty)
    nic: dict[str, Any] = field(default_factory=_empty)
    host: dict[str, Any] = field(default_factory=_empty)
    protocol: dict[str, Any] = field(default_factory=_empty)

    # -- building ---------------------------------------------------------

    def set(self, path: str, value: Any) -> Scenario:
        """Set one key by dotted path (``"nic.delay_us"``) and return ``self``.

        A mapping value is merged into the table at ``path`` rather than
        replacing it.

        Examples
        --------
        >>> Scenario().set("platform.nic.mtu", 9000).platform
        {'nic': {'mtu': 9000}}
        """
        if not isinstance(path, str):
            raise NicsimError(f"key {path!r}: expected a dotted key string, e.g. 'nic.delay_us'")
        check_depth(value, path)
        head, _, rest = path.partition(".")
        if head not in _FIELD_NAMES:
            allowed = ", ".join(_FIELD_NAMES)
            raise NicsimError(f"{path} = {value!r}: unknown key {head!r}; allowed: {allowed}")
        if head == "seed" and not rest:
            check_seed(value)
        if head == "preset" and not rest:
            check_preset_file(value)
        path_like = isinstance(value, str | os.PathLike)
        if head == "pcap" and not rest and value is not None and not path_like:
            raise NicsimError(f"pcap = {value!r}: expected a file path (str or pathlib.Path)")
        if not rest:
            if head in SECTIONS and isinstance(value, Mapping):
                _merge(getattr(self, head), value)
            elif head in SECTIONS:
                raise NicsimError(f"{path} = {value!r}: expected a table")
            else:
                setattr(self, head, value)
            return self
        if head not in SECTIONS:
            raise NicsimError(f"{path} = {value!r}: {head!r} is not a table")
        table: dict[str, Any] = getattr(self, head)
        *parents, leaf = rest.split(".")
        for key in parents:
            table = table.setdefault(key, {})
            if not isinstance(table, dict):
                raise NicsimError(f"{path} = {value!r}: {key!r} is not a table")
        if isinstance(value, Mapping) and isinstance(table.get(leaf), dict):
            _merge(table[leaf], value)
        else:
            table[leaf] = copy.deepcopy(value)
        return self

    def update(self, overrides: Mapping[str, Any]) -> Scenario:
        """Apply several :meth:`set` calls; ``__`` in a key stands for ``.``.

        The overrides replace the scenario's values; a key they give twice
        (``nic__coalescing=...`` and ``nic={"coalescing": ...}``) is
        refused, naming both (:func:`check_once`).

        Examples
        --------
        >>> Scenario().update({"nic__delay_us": 0.0, "seed": 7}).nic
        {'delay_us': 0.0}
        """
        if not isinstance(overrides, Mapping):
            raise NicsimError(f"overrides = {overrides!r}: expected a dict of key -> value")
        given = []
        for key, value in overrides.items():
            if not isinstance(key, str):
                self.set(key, value)  # raises, naming the key
            given.append(Given(key.replace("__", "."), value, f"{key}={_short(value)}"))
        check_once(given)
        for item in given:
            self.set(item.path, item.value)
        return self

    # -- conversion -------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return the scenario as nested plain data, empty tables left out."""
        return self._data(copy.deepcopy)

    def _data(self, copied: Any = lambda table: table) -> dict[str, Any]:
        """Return the scenario as nested data, each table passed through ``copied``.

        :meth:`to_toml` reads the tables without copying them (it makes
        plain data of its own).
        """
        out: dict[str, Any] = {"preset": self.preset, "seed": self.seed}
        if self.pcap is not None:
            out["pcap"] = str(self.pcap)
        for name in SECTIONS:
            table = getattr(self, name)
            if table:
                out[name] = copied(table)
        return out

    def to_toml(self) -> str:
        """Return the TOML text that :func:`nicsim._core.run` accepts.

        Raises
        ------
        NicsimError
            If a value cannot be written as TOML, naming its key: ``None``,
            an object of another type, a non-string key, an integer beyond
            64 bits, a section that is not a table. NumPy-style numbers are
            written as plain ones.

        Examples
        --------
        >>> Scenario().set("nic.delay_us", None).to_toml()  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        NicsimError: invalid value for `nic.delay_us`: None (allowed: a number, ...)
        """
        for name in SECTIONS:
            table = getattr(self, name)
            if not isinstance(table, Mapping):
                raise NicsimError(f"{name} = {table!r}: expected a table")
        try:
            return tomli_w.dumps(_plain(self._data(), ""))
        except _UnwritableError as err:
            raise NicsimError(self._with_range(err)) from None

    def _with_range(self, err: _UnwritableError) -> str:
        """Return the message of a value TOML cannot hold, with its key's real range.

        The value is replaced by probes the core refuses for the key (the
        nearest 64-bit integer, a list, a boolean): the first refusal that
        names the key tells what it allows. Else the message says what TOML
        holds.
        """
        probes: list[Any] = [[], True]
        if isinstance(err.value, numbers.Integral) and not isinstance(err.value, bool):
            probes.insert(0, _INT64.stop - 1 if int(err.value) > 0 else _INT64.start)
        for probe in probes:
            data = self.to_dict()
            at: Any = data
            *parents, leaf = err.path
            for part in parents:
                at = at.get(part) if isinstance(part, str) else at[part]
            at[leaf] = probe
            try:
                _core.check(tomli_w.dumps(_plain(data, "")))
            except _UnwritableError:
                break  # another value TOML cannot hold
            except NicsimError as refused:
                words = str(refused)
                lead = f"invalid value for `{err.key}`: "
                if words.startswith(lead) and "(allowed: " in words:
                    allowed = words[words.index("(allowed: ") :].removesuffix(")")
                    return f"{lead}{err.shown} {allowed}{err.leave})"
                break
            else:
                continue
        return err.message

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        """Build a scenario from nested plain data (the shape of the TOML file).

        Examples
        --------
        >>> Scenario.from_dict({"workload": {"kind": "flood"}, "seed": 3}).seed
        3
        """
        if not isinstance(data, Mapping):
            raise NicsimError(f"scenario = {data!r}: expected a dict shaped like the scenario file")
        scenario = cls(workload={})
        for key, value in data.items():
            scenario.set(key, value)
        return scenario

    @classmethod
    def from_toml(
        cls, text: str, *, base_dir: Path | None = None, what: str = "scenario"
    ) -> Scenario:
        """Parse scenario TOML text (``what`` names it in errors).

        A relative ``preset`` path that is not an embedded preset name is
        resolved against ``base_dir`` (the directory of the scenario file).
        """
        if not isinstance(text, str):
            raise NicsimError(f"scenario = {text!r}: expected TOML text (a str)")
        data = loads(text, what)
        scenario = cls.from_dict(data)
        if base_dir is not None and "preset" in data:
            candidate = base_dir / str(data["preset"])
            if not Path(str(data["preset"])).is_absolute() and candidate.is_file():
                check_preset_file(str(candidate))
                scenario.preset = str(candidate)
        return scenario

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read a scenario TOML file (as :func:`read_toml_file` allows)."""
        if not isinstance(path, str | os.PathLike):
            raise NicsimError(f"scenario file = {path!r}: expected a path (str or pathlib.Path)")
        path = Path(path)
        text = read_toml_file(path, "scenario file")
        return cls.from_toml(text, base_dir=path.parent, what=f"scenario file {str(path)!r}")


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Scenario))


#: TOML integers are signed 64-bit (TOML 1.0, "Integer").
_INT64 = range(-(2**63), 2**63)
_ALLOWED_VALUE = "a number, string, boolean, list or table"


class _UnwritableError(NicsimError):
    """A value TOML cannot hold, at ``path`` (``key`` as written): :func:`_plain`'s error.

    :meth:`Scenario.to_toml` words it again with the key's real range.
    """

    def __init__(self, path: list[str | int], value: Any, message: str, shown: str, leave: str):
        super().__init__(message)
        self.path, self.value, self.message = path, value, message
        self.key, self.shown, self.leave = _show_key(path), shown, leave


def _plain(value: Any, key: str, path: list[str | int] | None = None) -> Any:
    """Return ``value`` as plain TOML data, or raise :class:`NicsimError` naming ``key``.

    Numbers of other types (``numbers.Integral`` / ``numbers.Real``, e.g.
    NumPy's) become ``int`` / ``float``; dates and times stay (TOML has them).
    A value TOML cannot hold raises :class:`_UnwritableError`.
    """
    path = path or []
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise NicsimError(f"{key or 'scenario'}: key {k!r} is not a string")
            out[k] = _plain(v, f"{key}.{k}" if key else k, [*path, k])
        return out
    if isinstance(value, list | tuple):
        return [_plain(v, f"{key}[{i}]", [*path, i]) for i, v in enumerate(value)]
    if isinstance(value, bool | str | float | datetime.date | datetime.time):
        return value
    if isinstance(value, numbers.Integral):
        if int(value) not in _INT64:
            raise _UnwritableError(
                path,
                value,
                f"invalid value for `{key}`: {value} (allowed: an integer of 64 bits, "
                f"{_INT64.start} ..= {_INT64.stop - 1})",
                str(value),
                "",
            )
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    what = "None" if value is None else f"{value!r} ({type(value).__name__})"
    leave = "; leave the key out to take the preset's value" if value is None else ""
    raise _UnwritableError(
        path,
        value,
        f"invalid value for `{key}`: {what} (allowed: {_ALLOWED_VALUE}{leave})",
        what,
        leave,
    )


def _merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    """Deep-merge ``new`` into ``into``."""
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)


#: The base seed of a campaign when none is given.
DEFAULT_SEED = 1


def check_seed(seed: object) -> int:
    """Return ``seed`` if it is an allowed seed, else raise :class:`NicsimError`.

    Seeds are integers ``0 <= seed < nicsim._core.SEED_LIMIT`` (2**63: the
    scenario is TOML, whose integers are signed 64-bit). The message is the
    core's, so a bad seed reads the same from every entry point.

    Examples
    --------
    >>> check_seed(7)
    7
    >>> check_seed(-1)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    NicsimError: invalid value for `seed`: -1 (allowed: an integer 0 ..= 9223372036854775807)
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT:
        raise NicsimError(
            f"invalid value for `seed`: {seed!r} (allowed: an integer 0 ..= {SEED_LIMIT - 1})"
        )
    return seed
