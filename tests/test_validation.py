"""The validation record tells the truth: quotes are verbatim, numbers are printed where
they say, fitted means a preset parameter was fitted to it, and docs/validation.md is made
from the same data."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from nicsim import runner
from nicsim.studies import exp_coal_transfer, fit, fit_lci, report, validation
from nicsim.studies.exp_base import Claim, Published, number
from nicsim.studies.experiments import EXPERIMENTS
from nicsim.studies.papers import PAPERS, Quote, Ref, locate, normalise, paper_text, papers_dir
from nicsim.studies.validation import FITS, MECHANISMS, NUMBERS, Mechanism, PublishedNumber

RunFn = Callable[[str], dict[str, float | int | str]]
REPO = Path(__file__).resolve().parents[1]

needs_papers = pytest.mark.skipif(
    papers_dir() is None, reason="the studies' texts (shared/papers, $NICSIM_PAPERS) are absent"
)

#: Every published number: (experiment id or None, record).
ALL_NUMBERS: list[tuple[str | None, Published | PublishedNumber]] = [
    (exp.id, item) for exp in EXPERIMENTS.values() for item in exp.published
] + [(None, n) for n in NUMBERS]
ALL_CLAIMS = [(exp.id, claim) for exp in EXPERIMENTS.values() for claim in exp.claims]


def _location(study: str, where: str) -> str:
    text = locate(paper_text(study), where)
    assert text is not None, f"{PAPERS[study].tag} has no {where}"
    return normalise(text)


def _id(item: Published | PublishedNumber) -> str:
    return f"{item.source}: {item.quantity}"


# -- quotes --------------------------------------------------------------------


@needs_papers
@pytest.mark.parametrize(
    "quote",
    [q for m in MECHANISMS for q in m.quotes],
    ids=lambda q: f"{q.study}{q.where}:{q.text[:30]}",
)
def test_mechanism_quotes_are_verbatim_in_their_section(quote: Quote) -> None:
    assert normalise(quote.text) in _location(quote.study, quote.where), str(quote)


@needs_papers
@pytest.mark.parametrize("claim", [c for _, c in ALL_CLAIMS], ids=[e for e, _ in ALL_CLAIMS])
def test_a_claim_attributed_to_a_study_quotes_it(claim: Claim) -> None:
    if isinstance(claim.source, Quote):
        assert normalise(claim.source.text) in _location(claim.source.study, claim.source.where)
    else:
        # Not a study's statement: nicsim's own expectation or an outside document.
        own = claim.source.startswith("nicsim's expectation: ")
        assert own or not any(s.tag in claim.source for s in PAPERS.values()), claim.source


def test_quote_and_ref_refuse_an_unknown_study() -> None:
    with pytest.raises(ValueError, match="omx"):
        Ref("omx", "§1")
    with pytest.raises(ValueError, match="allowed"):
        Quote("nope", "§1", "x")


@needs_papers
def test_locate_finds_sections_paragraphs_and_tables_and_nothing_else() -> None:
    coal = paper_text("omx-coal")
    assert "433k messages per second" in (locate(coal, "§IV-B1") or "")
    assert "433k" not in (locate(coal, "§IV-B2") or "")
    table = locate(coal, "Table I") or ""
    assert table.startswith("**Table I.**") and "| 0 B | 490k |" in table
    assert "Table II" not in table
    assert locate(coal, "§IV-F") is None and locate(coal, "Table IX") is None
    assert "32 kB L1" in (locate(paper_text("omx-mq"), "§4.4") or "")
    assert "Results" in (locate(paper_text("emo"), "§4.1.4") or "")


# -- published numbers ---------------------------------------------------------


@needs_papers
@pytest.mark.parametrize("item", [n for _, n in ALL_NUMBERS], ids=[_id(n) for _, n in ALL_NUMBERS])
def test_every_published_number_is_printed_at_its_location(
    item: Published | PublishedNumber,
) -> None:
    printed = item.as_printed if isinstance(item, Published) else item.printed
    assert normalise(printed) in _location(item.source.study, item.source.where), printed
    bound = isinstance(item, Published) and item.bound != "="
    value = number(printed)
    if value is not None and not bound:
        assert math.isclose(value * item.scale, item.value, rel_tol=1e-9), (printed, item.value)


@pytest.mark.parametrize("item", [n for _, n in ALL_NUMBERS], ids=[_id(n) for _, n in ALL_NUMBERS])
def test_no_held_result_is_used(item: Published | PublishedNumber) -> None:
    printed = item.as_printed if isinstance(item, Published) else item.printed
    for text in (printed, item.quantity, getattr(item, "note", ""), getattr(item, "reason", "")):
        assert "[held]" not in text and "held" not in text.split(), text


def test_no_published_number_is_recorded_twice() -> None:
    # A number an experiment comes to simulate moves from NUMBERS to its Published values.
    seen: dict[tuple[Ref, str, str], str] = {}
    for exp_id, item in ALL_NUMBERS:
        key = (item.source, item.quantity, str(item.value))
        assert key not in seen, f"{_id(item)}: in {seen[key]} and {exp_id or 'NUMBERS'}"
        seen[key] = exp_id or "NUMBERS"
    # The same table cell, copied into NUMBERS while an experiment simulates it.
    simulated = {
        (item.source, item.as_printed) for _, item in ALL_NUMBERS if isinstance(item, Published)
    }
    copied = [
        _id(item)
        for _, item in ALL_NUMBERS
        if isinstance(item, PublishedNumber)
        and item.source.where.startswith("Table")
        and (item.source, item.printed) in simulated
    ]
    assert not copied, copied


#: A cell of a Markdown table that holds only numbers (``490k``, ``29.80 % + 13.79 %``,
#: ``91.50 (-1.6 %)``, ``34.62 s``, ``+2.8 %``); row labels such as ``0 B`` do not.
VALUE_CELL = re.compile(r"[-+\d.\s%()ks]*\d[-+\d.\s%()ks]*")


def _table_numbers(text: str) -> set[float]:
    rows = [line for line in text.splitlines() if line.startswith("|")][2:]  # no header
    found: set[float] = set()
    for row in rows:
        for cell in row.strip().strip("|").split("|")[1:]:  # no row label
            cell = cell.strip()
            if VALUE_CELL.fullmatch(cell):
                for token in re.findall(r"[-+]?\d+(?:\.\d+)?k?", cell):
                    value = number(token)
                    assert value is not None
                    found.add(round(value, 6))
    return found


@needs_papers
@pytest.mark.parametrize("study", PAPERS)
def test_every_visible_table_number_has_a_row(study: str) -> None:
    text = paper_text(study)
    names = re.findall(r"^\*{1,2}(Table [IVX]+)\.", text, re.MULTILINE)
    for name in names:
        table = locate(text, name)
        assert table is not None
        printed = {
            round(v, 6)
            for _, n in ALL_NUMBERS
            if n.source == Ref(study, name)
            for v in [number(n.as_printed if isinstance(n, Published) else n.printed)]
            if v is not None
        }
        missing = _table_numbers(table) - printed
        assert not missing, f"{PAPERS[study].tag} {name}: no row for {sorted(missing)}"


def test_a_table_value_cell_is_told_from_a_label() -> None:
    table = "| h | a | b |\n|---|---|---|\n| 0 B | 490k | 29.80 % + 1.5 % |\n| x | 4 MB | [held] |"
    assert _table_numbers(table) == {490000.0, 29.8, 1.5}


# -- fitted or predicted -------------------------------------------------------


def _fitted_keys(preset: str) -> set[str]:
    """``table.key`` of every value the preset file marks ``[fitted]``."""
    keys, table = set(), ""
    for line in (REPO / "presets" / f"{preset}.toml").read_text(encoding="utf-8").splitlines():
        header = re.match(r"^\[(\w+)\]", line)
        if header:
            table = header.group(1)
        entry = re.match(r"^(\w+)\s*=[^#]*#\s*\[fitted\]", line)
        if entry:
            keys.add(f"{table}.{entry.group(1)}")
    return keys


@pytest.mark.parametrize("fit_key", FITS)
def test_a_calibration_sets_only_parameters_its_preset_marks_fitted(fit_key: str) -> None:
    calibration = FITS[fit_key]
    for preset in calibration.presets:
        assert set(calibration.parameters) <= _fitted_keys(preset), preset


def test_a_fitted_row_names_a_known_calibration() -> None:
    for _, item in ALL_NUMBERS:
        assert item.fit is None or item.fit in FITS, _id(item)


def _targets() -> dict[str, list[float]]:
    """The values each calibration fits to, from the fit modules themselves."""
    return {
        "open-mx": [t.published for s in fit.STUDIES.values() for t in s.targets()],
        "lci2000": [fit_lci.TARGET_LATENCY_US],
    }


@pytest.mark.parametrize("fit_key", FITS)
def test_every_calibration_target_is_a_fitted_row(fit_key: str) -> None:
    fitted = [item.value for _, item in ALL_NUMBERS if item.fit == fit_key]
    for target in _targets()[fit_key]:
        assert any(math.isclose(target, v) for v in fitted), f"{fit_key}: {target} not fitted"


# -- mechanisms ----------------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.name[:40])
def test_a_mechanism_points_at_code_and_tests_that_exist(mechanism: Mechanism) -> None:
    assert mechanism.status in validation.STATUSES
    assert mechanism.quotes and mechanism.explains
    if mechanism.status != "modelled":
        assert mechanism.how, "say what is missing"
    if mechanism.status == "modelled":
        assert mechanism.code, "say where it is modelled"
    for code in mechanism.code:
        path = REPO / code.path
        assert path.is_file(), code.path
        assert code.symbol in path.read_text(encoding="utf-8"), str(code)
    for test in mechanism.tests:
        source = (REPO / test.path).read_text(encoding="utf-8")
        assert re.search(rf"\b(fn|def) {test.name}\(", source), str(test)
    assert set(mechanism.shown_by) <= set(EXPERIMENTS)


#: Mechanisms the issue names, by a phrase of the study that gives each.
NAMED_IN_THE_ISSUE = (
    "up to 20 % of the traffic",
    "pipeline 4 requests",
    "requires more work in the NIC",
    "defer interrupts by 3 or 4 packets",
    "seven out of eight packets",
    "competing for the same core",
    "multiqueue implementation requiring more work",
    "entire dual-core sub-chip is idle",
    "by a factor of about 11 on IS",
    "watchdog delays on the performance",
    "different clock granularities",
)


@pytest.mark.parametrize("phrase", NAMED_IN_THE_ISSUE)
def test_the_mechanisms_the_issue_names_are_listed(phrase: str) -> None:
    assert any(phrase in normalise(q.text) for m in MECHANISMS for q in m.quotes), phrase


def test_every_study_has_mechanisms_and_the_unmodelled_ones_are_counted() -> None:
    assert {m.study for m in MECHANISMS} == set(PAPERS)
    by_name = {m.name: m for m in MECHANISMS}
    for name in (
        "A core sleeps only when its whole die is idle",
        "The multiqueue firmware does more work per packet",
        "The stream firmware does more work in the NIC",
        "The library and the handler compete for one core",
    ):
        assert by_name[name].status == "modelled" and by_name[name].tests, name
    assert all(m.how for m in MECHANISMS if m.status == "not modelled")


# -- the claims the study contradicts -------------------------------------------


def test_marking_notify_is_claimed_not_critical_as_the_study_says() -> None:
    [notify] = [c for c in exp_coal_transfer.MARKING.claims if "notify" in c.text]
    assert notify.comparison == "<" and notify.bound > 1
    assert isinstance(notify.source, Quote)
    assert "Notify packet does not however appear critical" in notify.source.text
    table = pd.DataFrame({"unmarked_class": ["none", "notify"], "transfer_time_us": [100.0, 100.5]})
    assert notify.check(table) == (1.005, True)


def test_no_claim_says_stream_always_defers_a_misordered_message() -> None:
    stream = [c for c in exp_coal_transfer.MISORDER.claims if "success(stream" in c.text]
    assert stream and all(c.comparison == "<" for c in stream)
    perfect = pd.DataFrame(
        {
            "strategy": ["stream", "stream"],
            "degree": [1, 3],
            "deferral_success_rate": [1.0, 1.0],
        }
    )
    for claim in stream:
        checked = claim.check(perfect)
        assert checked is not None and not checked[1], claim.text


# -- rows and the document -------------------------------------------------------


def test_rows_cover_every_number_and_count_fitted_and_predicted(fake_run: RunFn) -> None:
    tables = runner.run_experiments(["coalescing-msgrate"], jobs=1, quick=True, run_fn=fake_run)
    rows = validation.rows(tables)
    assert len(rows) == len(ALL_NUMBERS)
    msgrate = [r for r in rows if r.experiment == "coalescing-msgrate"]
    assert msgrate and all(r.simulated is not None for r in msgrate)
    assert {r.status for r in msgrate} == {"fitted", "predicted"}
    unrun = [r for r in rows if r.experiment == "multiqueue-nas"]
    assert unrun and all(r.simulated is None and "not run" in r.note for r in unrun)
    assert {r.status for r in rows if r.experiment is None} == {"not simulated", "input"}


def _provenance() -> report.Provenance:
    return report.Provenance(nicsim_version="9.9", preset="omx2009", seed=1, quick=True)


def test_validation_md_is_the_same_from_memory_and_from_the_files(
    fake_run: RunFn, tmp_path: Path
) -> None:
    ids = ["coalescing-msgrate", "coalescing-marking", "multiqueue-cache"]
    tables = runner.run_experiments(ids, jobs=1, quick=True, run_fn=fake_run)
    report.write_report(tables, tmp_path, _provenance())
    written = validation.write(tables, tmp_path / "validation.md", _provenance())
    assert validation.main(["--tables", str(tmp_path), "--out", str(tmp_path / "again.md")]) == 0
    assert (tmp_path / "again.md").read_bytes() == written.read_bytes()
    text = written.read_text(encoding="utf-8")
    assert "mode: quick" in text and "experiments run: 3 of" in text
    for m in MECHANISMS:
        assert f"#### {m.name} — {m.status}" in text
    assert "Marking the Notify packet does not however appear critical." in text
    assert "not simulated (fitted: lci2000)" in text


def test_the_command_line_refuses_a_directory_without_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        validation.main(["--tables", str(tmp_path), "--out", str(tmp_path / "v.md")])
    assert exit_info.value.code == 2
    assert "no experiment table" in capsys.readouterr().err
    assert not (tmp_path / "v.md").exists()


def test_the_committed_validation_md_lists_every_mechanism_and_number() -> None:
    text = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    assert "- mode: full" in text and f"experiments run: {len(EXPERIMENTS)} of" in text
    for m in MECHANISMS:
        assert f"#### {m.name} — {m.status}" in text, m.name
    for _, item in ALL_NUMBERS:
        assert item.quantity.replace("|", "\\|") in text, item.quantity
