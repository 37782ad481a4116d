"""Every ``[fact]`` in a preset quotes its source, and a quoted study says what is quoted.

A preset value marked ``[fact]`` says, in its own comment (the ``#`` comment of
its line and the indented comment lines under it), where it comes from. A
*source* is one of:

* a study: its tag ([OMX-COAL], [OMX-MQ], [LCI], [EMO]), a section or table as
  :func:`nicsim.studies.papers.locate` reads it (``§IV-B1``, ``§4.1``, ``Table I``) and
  a sentence of it in double quotes, ``[OMX-COAL] §IV-A "... of 1500 bytes"``.
  The quote must be in that section of the study's text (``$NICSIM_PAPERS`` or
  ``shared/papers``), compared case-insensitively with whitespace collapsed and
  with ``µ`` written ``u``, curly quotes and dashes as ASCII (the presets are
  ASCII);
* the spec: ``SPEC §2.1 "..."``, checked the same way against ``SPEC.md``
  beside the papers (weaker than the study it digests: prefer the study);
* a source file and a symbol of it: a file name with its extension (``.c``,
  ``.h``, ``.ac``; ``common/omx_wire.h``, ``myri10ge.c``) and an identifier
  with an underscore that is neither part of a file name nor a preset key
  (``OMX_PULL_REPLY_PER_BLOCK``, ``myri10ge_intr_coal_delay``);
* a named datasheet, standard or manual: ``IEEE 802.3``, ``... datasheet``,
  ``... Specification``, ``... Reference Manual``.

What no source states is an ``[estimate]`` with its candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import nicsim
from nicsim.studies.papers import PAPERS, locate, normalise, paper_text, papers_dir

REPO = Path(__file__).resolve().parents[1]
PRESET_FILES = sorted((REPO / "presets").glob("*.toml"))

needs_papers = pytest.mark.skipif(
    papers_dir() is None, reason="the studies' texts (shared/papers, $NICSIM_PAPERS) are absent"
)

#: Study tag -> key of :data:`nicsim.studies.papers.PAPERS`.
STUDY_KEYS = {study.tag: key for key, study in PAPERS.items()}

_TAGS = "|".join(re.escape(tag) for tag in STUDY_KEYS)
_STUDY_QUOTE = re.compile(rf'({_TAGS})\s+(§[\w.-]+|Table [IVX]+):?\s+"([^"]+)"')
_SPEC_QUOTE = re.compile(r'SPEC\s+(§\d+(?:\.\d+)*):?\s+"([^"]+)"')
_FILE = re.compile(r"(?<![\w.+/-])(?:[\w.+-]+/)*[\w+-][\w.+-]*\.(?:c|h|ac)\b")
_SYMBOL = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b")
_DOCUMENT = re.compile(
    r"\bIEEE 802\.\d+\w*|\b(?i:datasheet)\b|\bSpecifications?\b|\bReference Manual\b"
)
_KEY = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*=", re.MULTILINE)
_TABLE = re.compile(r"^\[+([\w.]+)\]+\s*$")
_VALUE_LINE = re.compile(r'^(\w+)\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^#"]*?)\s*#(.*)$')
_CONTINUATION = re.compile(r"^\s+#(.*)$")
#: The studies' non-ASCII spellings, as the (ASCII) presets write them: micro signs,
#: curly quotes, en and em dashes.
_ASCII = str.maketrans(
    {
        "\u00b5": "u",
        "\u03bc": "u",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
    }
)


@dataclass(frozen=True)
class Fact:
    """One ``[fact]`` value of a preset: where it is and its whole comment."""

    preset: str
    table: str
    key: str
    comment: str

    def __str__(self) -> str:
        return f"{self.preset}:{self.table}.{self.key}"


@dataclass(frozen=True)
class Citation:
    """A quote with its place: a study (its key) or the spec (``"spec"``), and a section."""

    source: str
    where: str
    text: str


def facts(preset: str, text: str) -> list[Fact]:
    """Return the ``[fact]`` values of a preset's TOML text, comments joined."""
    out: list[Fact] = []
    table = ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _TABLE.match(line)
        if head:
            table = head.group(1)
            continue
        m = _VALUE_LINE.match(line)
        if not m:
            continue
        comment = [m.group(2)]
        for more in lines[i + 1 :]:
            cont = _CONTINUATION.match(more)
            if not cont:
                break
            comment.append(cont.group(1))
        joined = " ".join(part.strip() for part in comment)
        if "[fact]" in joined:
            out.append(Fact(preset, table, m.group(1), joined))
    return out


def citations(comment: str) -> list[Citation]:
    """The quotes of a comment that say where they are from (a study or the spec)."""
    found = [
        Citation(STUDY_KEYS[tag], where, quote)
        for tag, where, quote in _STUDY_QUOTE.findall(comment)
    ]
    found += [Citation("spec", where, quote) for where, quote in _SPEC_QUOTE.findall(comment)]
    return found


def code_sources(comment: str, keys: set[str]) -> list[tuple[str, str]]:
    """(file, symbol) pairs: each file name of the comment with each symbol beside it."""
    files = _FILE.findall(comment)
    rest = _FILE.sub(" ", comment)
    symbols = [s for s in _SYMBOL.findall(rest) if s not in keys]
    return [(f, s) for f in files for s in symbols]


def sources(comment: str, keys: set[str]) -> list[str]:
    """Every source a ``[fact]`` comment names (empty: it names none).

    ``keys`` are the preset's keys: a key's name is not a symbol of a source.
    """
    out = [f"{c.source} {c.where}" for c in citations(comment)]
    out += [f"{f} {s}" for f, s in code_sources(comment, keys)]
    out += [m.group(0) for m in _DOCUMENT.finditer(comment)]
    return out


def plain(text: str) -> str:
    """Text as quotes are compared: ASCII spellings, whitespace collapsed, case folded."""
    return normalise(text.translate(_ASCII)).casefold()


def spec_path() -> Path | None:
    """``SPEC.md`` beside the studies' texts, or ``None``."""
    directory = papers_dir()
    if directory is None:
        return None
    path = directory.parent / "SPEC.md"
    return path if path.is_file() else None


def quoted_where(citation: Citation) -> str | None:
    """The text of the place a citation points to (``None``: no such place)."""
    if citation.source == "spec":
        path = spec_path()
        assert path is not None
        return locate(path.read_text(encoding="utf-8"), citation.where)
    return locate(paper_text(citation.source), citation.where)


def _all_keys(text: str) -> set[str]:
    return set(_KEY.findall(text))


TEXTS = {path.stem: path.read_text(encoding="utf-8") for path in PRESET_FILES}
ALL_FACTS = [fact for name, text in TEXTS.items() for fact in facts(name, text)]
KEYS = {name: _all_keys(text) for name, text in TEXTS.items()}
ALL_CITATIONS = [(fact, c) for fact in ALL_FACTS for c in citations(fact.comment)]


def test_the_presets_have_facts() -> None:
    assert {p.stem for p in PRESET_FILES} >= {"omx2009", "omx2009-mq", "lci2000", "emo2004"}
    assert len(ALL_FACTS) >= 50


@pytest.mark.parametrize("fact", ALL_FACTS, ids=str)
def test_every_fact_names_its_source(fact: Fact) -> None:
    assert sources(fact.comment, KEYS[fact.preset]), (
        f'{fact}: a [fact] must quote its source -- [STUDY] §SECTION "sentence", '
        'SPEC §N "sentence", a source file and symbol (omx_wire.h OMX_...), or a named '
        f"datasheet/standard; else it is an [estimate] with candidates. Comment: {fact.comment}"
    )


@needs_papers
@pytest.mark.parametrize(
    ("fact", "citation"),
    ALL_CITATIONS,
    ids=[f"{fact}:{c.source}{c.where}:{c.text[:24]}" for fact, c in ALL_CITATIONS],
)
def test_a_quoted_study_says_it_there(fact: Fact, citation: Citation) -> None:
    if citation.source == "spec" and spec_path() is None:
        pytest.skip("SPEC.md is not beside the studies' texts")
    text = quoted_where(citation)
    assert text is not None, f"{fact}: {citation.source} has no {citation.where}"
    assert plain(citation.text) in plain(text), (
        f'{fact}: not in {citation.where}: "{citation.text}"'
    )


# -- the checker itself ---------------------------------------------------------

KEYS_OF_OMX2009 = KEYS.get("omx2009", set())


@pytest.mark.parametrize(
    "comment",
    [
        "[fact] MTU 1500 in both studies",
        "[fact] Myri-10G default coalescing delay: 75 us",
        '[fact] [OMX-MQ] states no MTU; "MTU 1500"',  # a study, but no section
        "[fact] [OMX-COAL] §IV-A says 1500",  # a section, but no quote
        "[fact] set in omx_wire.h",  # a file, but no symbol
        "[fact] OMX_PULL_REPLY_PER_BLOCK = 32",  # a symbol, but no file
        "[fact] see ring_slots in omx2009.toml",  # a key is not a symbol
        "[fact] the standard value",
    ],
)
def test_a_fact_without_a_source_is_refused(comment: str) -> None:
    assert sources(comment, KEYS_OF_OMX2009) == []
    line = f"mtu = 1500  # {comment}\n"
    assert [f.comment for f in facts("t", line)] == [comment]


@pytest.mark.parametrize(
    ("comment", "source"),
    [
        ('[fact] [OMX-COAL] §IV-A "of 1500 bytes"', "omx-coal §IV-A"),
        ('[fact] SPEC §2.1: "an explicit ack after 4"', "spec §2.1"),
        ("[fact] common/omx_wire.h OMX_PULL_REPLY_PER_BLOCK = 32", "common/omx_wire.h"),
        ("[fact] myri10ge.c myri10ge_intr_coal_delay = 75", "myri10ge.c myri10ge_intr"),
        ("[fact] IEEE 802.3: preamble+SFD 8 B", "IEEE 802.3"),
        ("[fact] Intel Xeon Processor 5300 Series datasheet", "datasheet"),
        ("[fact] PCI Local Bus Specification 2.2", "Specification"),
    ],
)
def test_each_kind_of_source_is_recognised(comment: str, source: str) -> None:
    assert any(s.startswith(source) for s in sources(comment, KEYS_OF_OMX2009)), comment


def test_a_comment_goes_on_under_its_line() -> None:
    text = "[nic]\nx = 1  # [fact] see\n      #   acenic.h RX_JUMBO_RING_ENTRIES\n# [range]\n"
    (fact,) = facts("t", text)
    assert (fact.table, fact.key) == ("nic", "x")
    assert fact.comment == "[fact] see acenic.h RX_JUMBO_RING_ENTRIES"
    assert sources(fact.comment, set()) == ["acenic.h RX_JUMBO_RING_ENTRIES"]


@needs_papers
def test_a_misquote_is_caught() -> None:
    # [OMX-MQ] states no MTU: the sentence the preset once implied is not there.
    (wrong,) = citations('[fact] [OMX-MQ] §4.1 "MTU of 1500 bytes"')
    (right,) = citations('[fact] [OMX-COAL] §IV-A "MTU) of 1500  Bytes"')
    assert plain(wrong.text) not in plain(quoted_where(wrong) or "")
    assert plain(right.text) in plain(quoted_where(right) or "")
    assert quoted_where(Citation("omx-coal", "§IX-Z", "x")) is None


@pytest.mark.core
def test_the_embedded_presets_carry_these_facts() -> None:
    # The presets are compiled into the extension: a stale build ships old comments.
    assert sorted(nicsim.presets()) == sorted(p.stem for p in PRESET_FILES)
    for path in PRESET_FILES:
        embedded = facts(path.stem, nicsim.preset_toml(path.stem))
        assert embedded == facts(path.stem, TEXTS[path.stem]), path.name
