"""The four reference studies as documents: keys, locations, quotes.

This module owns what nicsim knows about the studies *as texts*: their keys
and tags (:data:`PAPERS`), references into them (:class:`Ref`: a section
such as ``"§IV-C2"`` or a table such as ``"Table I"``), verbatim quotes
(:class:`Quote`), and how a location is found in a study's cleaned text
(:func:`locate`). The texts themselves are not part of nicsim: they live in
the project's ``shared/papers`` directory (``$NICSIM_PAPERS`` overrides it),
and only tests and the validation check read them. Published values live
with the experiments (:mod:`nicsim.studies.exp_base`) and in
:mod:`nicsim.studies.validation`; this module holds none.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PAPERS",
    "Quote",
    "Ref",
    "Study",
    "locate",
    "normalise",
    "paper_text",
    "papers_dir",
]


@dataclass(frozen=True)
class Study:
    """One reference study.

    Attributes
    ----------
    key
        Short key used in references, e.g. ``"omx-coal"``.
    tag
        The tag the docs and reports use, e.g. ``"[OMX-COAL]"``.
    title
        Authors, title and venue.
    file
        File name of its cleaned text in the papers directory.
    """

    key: str
    tag: str
    title: str
    file: str


#: The studies nicsim reproduces, by key.
PAPERS: dict[str, Study] = {
    study.key: study
    for study in (
        Study(
            "omx-coal",
            "[OMX-COAL]",
            "Goglin & Furmento, Finding a tradeoff between host interrupt load and MPI "
            "latency over Ethernet (IEEE Cluster 2009)",
            "omx-coalescing-cluster2009.md",
        ),
        Study(
            "omx-mq",
            "[OMX-MQ]",
            "Goglin, NIC-assisted cache-efficient receive stack for message passing over "
            "Ethernet (CCPE 23(2), 2011)",
            "omx-multiqueue-ccpe2011.md",
        ),
        Study(
            "lci",
            "[LCI]",
            "Bhoedjang, Verstoep, Bal & Rühl, Reducing data and control transfer overhead "
            "through network-interface support (LCI on Myrinet, c. 2000)",
            "lci-myrinet.md",
        ),
        Study(
            "emo",
            "[EMO]",
            "Gilfeather & Maccabe, An extensible message-oriented offload model for "
            "high-performance applications (c. 2005)",
            "emo-model.md",
        ),
    )
}


@dataclass(frozen=True)
class Ref:
    """A place in a study: a section (``"§IV-C2"``, ``"§4.2"``) or a table (``"Table I"``).

    Examples
    --------
    >>> str(Ref("omx-coal", "Table I"))
    '[OMX-COAL] Table I'
    """

    study: str
    where: str

    def __post_init__(self) -> None:
        if self.study not in PAPERS:
            allowed = ", ".join(PAPERS)
            raise ValueError(f"study = {self.study!r}: unknown; allowed: {allowed}")

    def __str__(self) -> str:
        return f"{PAPERS[self.study].tag} {self.where}"


@dataclass(frozen=True)
class Quote:
    """Sentences quoted verbatim (modulo whitespace) from a study's section.

    Examples
    --------
    >>> str(Quote("omx-coal", "§IV-C3", "Marking the Notify packet does not matter."))
    '[OMX-COAL] §IV-C3: "Marking the Notify packet does not matter."'
    """

    study: str
    where: str
    text: str

    def __post_init__(self) -> None:
        Ref(self.study, self.where)  # checks the study key

    @property
    def ref(self) -> Ref:
        """Where the quote is from."""
        return Ref(self.study, self.where)

    def __str__(self) -> str:
        return f'{self.ref}: "{self.text}"'


def papers_dir() -> Path | None:
    """Return the directory of the studies' cleaned texts, or ``None`` if absent.

    ``$NICSIM_PAPERS`` if set, else ``shared/papers`` beside the repository
    (``<repo>/../shared/papers``, where the project keeps them).
    """
    env = os.environ.get("NICSIM_PAPERS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[4] / "shared" / "papers")
    for path in candidates:
        if all((path / study.file).is_file() for study in PAPERS.values()):
            return path
    return None


def paper_text(study: str) -> str:
    """Return the cleaned text of a study; raise ``FileNotFoundError`` naming where it looked."""
    directory = papers_dir()
    if directory is None:
        raise FileNotFoundError(
            "the studies' texts were not found: set NICSIM_PAPERS to the directory holding "
            + ", ".join(s.file for s in PAPERS.values())
        )
    return (directory / PAPERS[study].file).read_text(encoding="utf-8")


def normalise(text: str) -> str:
    r"""Collapse every run of whitespace to one space (quotes match modulo whitespace).

    Examples
    --------
    >>> normalise("a  b\n c ")
    'a b c'
    """
    return " ".join(text.split())


_ROMAN = re.compile(r"^([IVX]+)(?:-([A-Z])(\d+)?)?$")
_NUMBERED = re.compile(r"^\d+(?:\.\d+)*$")
_HEADING = re.compile(r"^(#+) ")


def _block(lines: list[str], start: int) -> list[str]:
    """Lines from the heading at ``start`` to the next heading of its level or above."""
    level = len(_HEADING.match(lines[start]).group(1))  # type: ignore[union-attr]
    end = start + 1
    while end < len(lines):
        m = _HEADING.match(lines[end])
        if m and len(m.group(1)) <= level:
            break
        end += 1
    return lines[start:end]


def _heading(lines: list[str], pattern: str) -> list[str] | None:
    rx = re.compile(pattern)
    for i, line in enumerate(lines):
        if _HEADING.match(line) and rx.match(line):
            return _block(lines, i)
    return None


def _paragraph_section(lines: list[str], number: str) -> list[str] | None:
    """Return the lines from the marker ``**N) Title:**`` to the next such marker."""
    marker = re.compile(r"^\*\*\d+\) ")
    for i, line in enumerate(lines):
        if line.startswith(f"**{number}) "):
            end = i + 1
            while end < len(lines) and not marker.match(lines[end]):
                end += 1
            return lines[i:end]
    return None


def _table(lines: list[str], name: str) -> list[str] | None:
    """Return the caption line of ``name`` (e.g. ``Table I``) and the table after it."""
    caption = re.compile(rf"^\*{{1,2}}{re.escape(name)}\.")
    for i, line in enumerate(lines):
        if caption.match(line):
            end = i + 1
            while end < len(lines) and not lines[end].startswith("|"):
                end += 1
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            return lines[i:end]
    return None


def locate(text: str, where: str) -> str | None:
    r"""Return the text of a location in a study (``None`` if it does not exist).

    ``where`` is a section -- ``"§IV-C2"`` (roman section, lettered
    subsection, numbered paragraph, as in [OMX-COAL]), ``"§4.2"`` or
    ``"§4.1.4"`` (numbered headings), ``"§Abstract"`` (a named heading) --
    or a table (``"Table III"``: its caption and rows).

    Examples
    --------
    >>> doc = "## II. Two\n### B. Bee\n**1) One:** x\n**2) Two:** y\n## III. Three"
    >>> locate(doc, "§II-B2")
    '**2) Two:** y'
    >>> locate(doc, "§III")
    '## III. Three'
    >>> locate(doc, "§IV") is None
    True
    """
    lines = text.splitlines()
    if where.startswith("Table "):
        found = _table(lines, where)
    else:
        name = where.removeprefix("§")
        roman = _ROMAN.match(name)
        if roman:
            found = _heading(lines, rf"^## {roman.group(1)}\. ")
            if found is not None and roman.group(2):
                found = _heading(found, rf"^### {roman.group(2)}\. ")
            if found is not None and roman.group(3):
                found = _paragraph_section(found, roman.group(3))
        elif _NUMBERED.match(name):
            found = _heading(lines, rf"^#+ {re.escape(name)}\.? ")
        else:
            found = _heading(lines, rf"^#+ {re.escape(name)}\s*$")
    return None if found is None else "\n".join(found)
