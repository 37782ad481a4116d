"""What the studies' predictions hang on: the presets' estimates, run at their candidates.

A preset value marked ``[estimate]`` is one no source states. Where one
matters, a prediction is only as good as the estimate: this module runs
the experiments on a preset once as the preset is and once per candidate
of each estimate listed in ``estimates.toml`` (beside this module), and
reports every published value and claim whose verdict changes (a value
that stops or starts agreeing with the study, a claim that stops or starts
holding), and how many values move by more than
:data:`~nicsim.studies.seeds.STABLE` without changing their verdict.

A candidate is a copy of the preset with some keys set (``table.key``, the
last dot starting the key: ``host.tick.hz`` is ``hz`` of ``[host.tick]``),
written with the preset's comments kept
(:func:`nicsim.studies.preset_edit.with_values`), and run as
``nicsim reproduce --preset FILE`` runs it: an experiment's own settings
still win over the preset's.

``python -m nicsim.studies.sensitivity [EXPERIMENT ...] [--estimate NAME ...]
--out FILE`` writes the Markdown report (docs/estimates.md is one);
:func:`run` and :func:`render` are what the tests call.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

import pandas as pd
import tomli_w

from nicsim import _core, outputs, runner
from nicsim._core import NicsimError
from nicsim.scenario import check_seed
from nicsim.store import Store
from nicsim.studies import experiments as _experiments
from nicsim.studies.command import CommandLine, interruptible
from nicsim.studies.preset_edit import Value, kind_name, lookup, same_kind, toml_value, with_values
from nicsim.studies.report import markdown_table
from nicsim.studies.seeds import STABLE, item_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 fallback
    import tomli as tomllib

#: The experiments' platform when they name none (as :func:`nicsim.runner.plan`).
DEFAULT_PRESET = runner.DEFAULT_PRESET

#: The values and claims an estimate decides, as the command line last wrote them
#: (``--index``): the whole run takes about half an hour, too long for every
#: reproduction, so ``validation.md`` reads this file.
INDEX = Path(__file__).with_name("estimates_index.toml")
INDEX_COMMAND = (
    "python -m nicsim.studies.sensitivity --jobs 2 --out docs/estimates.md "
    "--index python/nicsim/studies/estimates_index.toml"
)


@dataclass(frozen=True)
class Candidate:
    """One candidate of an estimate: the preset keys it sets, by ``table.key``."""

    label: str
    values: Mapping[str, Value]


@dataclass(frozen=True)
class Estimate:
    """A preset estimate, the presets holding it, its candidates and why it is unknown."""

    name: str
    presets: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    why: str


def load(path: Path | None = None) -> list[Estimate]:
    """Read the estimates (``estimates.toml`` beside this module by default), checked.

    Every preset must be one nicsim has, every key one each preset holds
    (:func:`with_values` would add it otherwise), every value of the
    preset's kind and different from it, and every name unique.
    """
    if path is None:
        text = resources.files("nicsim.studies").joinpath("estimates.toml").read_text()
        where = "estimates.toml"
    else:
        text, where = path.read_text(), str(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise NicsimError(f"{where}: {err}") from None
    known = set(_core.presets())
    out: list[Estimate] = []
    for n, raw in enumerate(doc.get("estimate", []), 1):
        name = str(raw.get("name", f"#{n}"))
        presets = tuple(raw.get("presets", ()))
        candidates = tuple(
            Candidate(str(c["label"]), dict(c["set"])) for c in raw.get("candidates", ())
        )
        if not presets or not candidates:
            raise NicsimError(f"{where}: estimate {name!r} needs presets and candidates")
        if any(e.name == name for e in out):
            raise NicsimError(f"{where}: estimate {name!r} is listed twice")
        for preset in presets:
            if preset not in known:
                raise NicsimError(
                    f"{where}: estimate {name!r}: preset {preset!r} unknown; "
                    f"allowed: {', '.join(sorted(known))}"
                )
            parsed = tomllib.loads(_core.preset_toml(preset))
            for cand in candidates:
                for key, value in cand.values.items():
                    try:
                        old = lookup(parsed, key)
                    except KeyError:
                        raise NicsimError(
                            f"{where}: estimate {name!r}, candidate {cand.label!r}: "
                            f"preset {preset!r} has no key `{key}`"
                        ) from None
                    if not same_kind(old, value):
                        raise NicsimError(
                            f"{where}: estimate {name!r}, candidate {cand.label!r}: `{key}` = "
                            f"{value!r} is {kind_name(value)}; "
                            f"preset {preset!r} holds {kind_name(old)}"
                        )
            if all(lookup(parsed, k) == v for c in candidates for k, v in c.values.items()):
                raise NicsimError(
                    f"{where}: estimate {name!r}: every candidate is preset {preset!r}'s own value"
                )
        out.append(Estimate(name, presets, candidates, str(raw.get("why", ""))))
    return out


@dataclass(frozen=True)
class Verdict:
    """A published value or claim of an experiment, read off one table."""

    experiment: str
    kind: Literal["value", "claim"]
    name: str
    value: float | None
    holds: bool | None

    @property
    def key(self) -> tuple[str, str]:
        """The experiment and the value's or claim's name."""
        return self.experiment, self.name


def verdicts(exp_id: str, table: pd.DataFrame) -> list[Verdict]:
    """Every published value (agrees or not) and claim (holds or not) of ``exp_id`` on ``table``."""
    experiment = _experiments.get(exp_id)
    out: list[Verdict] = []
    for item in experiment.published:
        check = item.check(table)
        out.append(Verdict(exp_id, "value", item_name(item), check.simulated, check.agrees))
    for claim in experiment.claims:
        checked = claim.check(table)
        value, holds = (None, None) if checked is None else (float(checked[0]), checked[1])
        out.append(Verdict(exp_id, "claim", item_name(claim), value, holds))
    return out


def moved(base: Verdict, other: Verdict) -> bool:
    """Whether ``other`` departs from ``base`` by more than :data:`STABLE` of ``|base|``.

    An unmeasured value on either side counts as moved unless both are.

    Examples
    --------
    >>> v = lambda x: Verdict("e", "value", "q", x, True)
    >>> moved(v(1.0), v(1.04)), moved(v(1.0), v(1.06)), moved(v(0.0), v(0.0))
    (False, True, False)
    """
    if base.value is None or other.value is None:
        return (base.value is None) != (other.value is None)
    if base.value == 0:
        return other.value != 0
    return abs(other.value - base.value) / abs(base.value) > STABLE


@dataclass(frozen=True)
class Outcome:
    """One estimate's run: the base verdicts and, per candidate label, the candidate's."""

    estimate: Estimate
    base: list[Verdict]
    by_candidate: dict[str, list[Verdict]]

    def flips(self) -> list[tuple[Verdict, dict[str, Verdict]]]:
        """Return the values and claims a candidate changes the verdict of, with each's."""
        out = []
        for i, b in enumerate(self.base):
            others = {label: vs[i] for label, vs in self.by_candidate.items()}
            if any(o.holds != b.holds for o in others.values()):
                out.append((b, others))
        return out

    def moved_only(self) -> int:
        """How many values and claims some candidate moves by more than 5 % without a flip."""
        n = 0
        for i, b in enumerate(self.base):
            others = [vs[i] for vs in self.by_candidate.values()]
            if all(o.holds == b.holds for o in others) and any(moved(b, o) for o in others):
                n += 1
        return n


def _slug(text: str) -> str:
    """Return a file-name form of ``text``.

    >>> _slug("PAUSE, 1 ms limit")
    'pause-1-ms-limit'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _groups(exp_ids: Sequence[str]) -> dict[str, list[str]]:
    """Group the experiments by the preset they run on, order kept."""
    out: dict[str, list[str]] = {}
    for exp_id in exp_ids:
        preset = _experiments.get(exp_id).preset or DEFAULT_PRESET
        out.setdefault(preset, []).append(exp_id)
    return out


def _tables_verdicts(tables: Mapping[str, pd.DataFrame]) -> list[Verdict]:
    return [v for exp_id, table in tables.items() for v in verdicts(exp_id, table)]


def run(
    estimates: Sequence[Estimate],
    exp_ids: Sequence[str],
    *,
    jobs: int | None = None,
    quick: bool = False,
    seed: int = runner.DEFAULT_SEED,
    note: Callable[[str], None] | None = None,
    store: Store | None = None,
) -> list[Outcome]:
    """Run ``exp_ids`` as the presets are and under each candidate of ``estimates``.

    An estimate runs only the experiments on its presets; one none of
    ``exp_ids`` runs on is left out of the result. ``note`` is told what
    runs next (the command line prints it). With a ``store`` the finished
    runs are kept there and the candidates' presets are written under its
    root at names of their own, so the same call resumes where an
    interrupted one stopped (a changed candidate makes new runs: a preset
    file's bytes are part of a run's key).
    """
    say = note or (lambda _: None)
    groups = _groups(exp_ids)
    base: dict[str, list[Verdict]] = {}
    outcomes: list[Outcome] = []

    def tables_of(preset: str, file: Path | None) -> list[Verdict]:
        tables = runner.run_experiments(
            groups[preset],
            jobs=jobs,
            quick=quick,
            preset=None if file is None else str(file),
            seed=seed,
            store=store,
        )
        return _tables_verdicts(tables)

    with tempfile.TemporaryDirectory(prefix="nicsim-estimates-") as tmp:
        folder = Path(tmp) if store is None else store.root / "presets"
        folder.mkdir(parents=True, exist_ok=True)
        for estimate in estimates:
            presets = [p for p in estimate.presets if p in groups]
            if not presets:
                continue
            for preset in presets:
                if preset not in base:
                    say(f"{preset}: {len(groups[preset])} experiments as the preset is")
                    base[preset] = tables_of(preset, None)
            by_candidate: dict[str, list[Verdict]] = {}
            for cand in estimate.candidates:
                found: list[Verdict] = []
                for preset in presets:
                    path = folder / f"{_slug(estimate.name)}--{_slug(cand.label)}--{preset}.toml"
                    path.write_text(with_values(_core.preset_toml(preset), cand.values))
                    say(f"{preset}: {estimate.name}, {cand.label}")
                    found += tables_of(preset, path)
                by_candidate[cand.label] = found
            outcomes.append(Outcome(estimate, [v for p in presets for v in base[p]], by_candidate))
    return outcomes


def _pct(x: float) -> str:
    return f"{x * 100:g} %"


def _verdict_cell(v: Verdict) -> str:
    if v.value is None:
        return "not measured"
    if v.holds is None:
        word = "n/a"
    elif v.kind == "claim":
        word = "holds" if v.holds else "fails"
    else:
        word = "agrees" if v.holds else "disagrees"
    return f"{v.value:.4g} ({word})"


def render(outcomes: Sequence[Outcome], *, command: str) -> str:
    """Write the Markdown report: per estimate what each candidate flips, then an index."""
    lines = [
        "# What the predictions hang on: the presets' estimates at their candidates",
        "",
        f"Generated by `{command}`. Each estimate's experiments (those on its presets) ran "
        "once as the presets are and once per candidate (a copy of the preset with the "
        "candidate's keys set; an experiment's own settings still win). Listed: every "
        "published value whose agreement with the study (within 15 %, or the bound holding) "
        "changes, and every claim whose verdict changes. Also counted: the values and claims "
        f"a candidate moves by more than {_pct(STABLE)} without changing their verdict.",
        "",
    ]
    index: dict[tuple[str, str], list[str]] = {}
    for out in outcomes:
        est = out.estimate
        flips = out.flips()
        total = len(out.base)
        lines += [
            f"## {est.name}",
            "",
            est.why,
            "",
            f"Presets: {', '.join(f'`{p}`' for p in est.presets)}. Candidates: "
            + "; ".join(
                f"{c.label} ({', '.join(f'`{k}` = {toml_value(v)}' for k, v in c.values.items())})"
                for c in est.candidates
            )
            + ".",
            "",
            f"{len(flips)} of {total} values and claims change their verdict; "
            f"{out.moved_only()} more move by more than {_pct(STABLE)} without changing it.",
            "",
        ]
        if flips:
            labels = list(out.by_candidate)
            header = ["experiment", "value or claim", "the presets", *labels]
            body = [
                [
                    b.experiment,
                    b.name,
                    _verdict_cell(b),
                    *(_verdict_cell(o[label]) for label in labels),
                ]
                for b, o in flips
            ]
            lines += [markdown_table(header, body), ""]
        for b, _ in flips:
            index.setdefault(b.key, []).append(est.name)
    lines += ["## Index: the values and claims an estimate decides", ""]
    if index:
        lines += [
            markdown_table(
                ["experiment", "value or claim", "changes its verdict with"],
                [[e, n, "; ".join(names)] for (e, n), names in index.items()],
            ),
            "",
        ]
    else:
        lines += ["None.", ""]
    return "\n".join([*lines, *_bands(outcomes)])


@dataclass(frozen=True)
class Band:
    """A value or claim over every candidate of every estimate, one estimate at a time."""

    base: Verdict
    values: tuple[float, ...]
    holding: int
    runs: int


def bands(outcomes: Sequence[Outcome]) -> list[Band]:
    """Each value's and claim's range over the candidates, and under how many its verdict holds.

    ``runs`` counts the presets' own run and every candidate of every
    estimate whose experiments include it; ``values`` are the measured ones.

    Examples
    --------
    >>> v = lambda x, h: Verdict("e", "value", "q", x, h)
    >>> est = Estimate("r", ("p",), (Candidate("a", {}), Candidate("b", {})), "")
    >>> (b,) = bands([Outcome(est, [v(1.0, True)], {"a": [v(1.3, False)], "b": [v(0.9, True)]})])
    >>> min(b.values), max(b.values), b.holding, b.runs
    (0.9, 1.3, 2, 3)
    """
    found: dict[tuple[str, str], tuple[Verdict, list[Verdict]]] = {}
    for out in outcomes:
        for i, base in enumerate(out.base):
            _, seen = found.setdefault(base.key, (base, [base]))
            seen += [vs[i] for vs in out.by_candidate.values()]
    return [
        Band(
            base,
            tuple(v.value for v in seen if v.value is not None),
            sum(1 for v in seen if v.holds),
            len(seen),
        )
        for base, seen in found.values()
    ]


def _bands(outcomes: Sequence[Outcome]) -> list[str]:
    rows = bands(outcomes)
    if not rows:
        return []

    def span(r: Band) -> str:
        if not r.values:
            return "not measured"
        return f"{min(r.values):.4g} .. {max(r.values):.4g}"

    lines = [
        "",
        "## Every published value and claim over all the candidates",
        "",
        "One estimate at a time: each row's range covers the presets' own run and every "
        'candidate of every estimate whose experiments include it; "agrees" and "holds" '
        "count those runs.",
        "",
    ]
    for kind, verdict in (("value", "agrees in"), ("claim", "holds in")):
        chosen = [r for r in rows if r.base.kind == kind]
        if not chosen:
            continue
        header = ["experiment", kind, "the presets", "over the candidates", verdict]
        body = [
            [
                r.base.experiment,
                r.base.name,
                _verdict_cell(r.base),
                span(r),
                f"{r.holding} of {r.runs}",
            ]
            for r in chosen
        ]
        lines += [markdown_table(header, body), ""]
    return lines


def index_toml(outcomes: Sequence[Outcome], *, command: str) -> str:
    """Return the text of :data:`INDEX`: each flipped value or claim, the estimates flipping it.

    Examples
    --------
    >>> v = Verdict("e", "claim", "c < 1", 0.9, True)
    >>> est = Estimate("ring", ("omx2009",), (Candidate("big", {"nic.ring_slots": 4}),), "why")
    >>> out = Outcome(est, [v], {"big": [Verdict("e", "claim", "c < 1", 1.1, False)]})
    >>> print(index_toml([out], command="cmd"), end="")
    # Written by `cmd` (docs/estimates.md): the published values and claims
    # whose verdict a candidate of a preset estimate changes.
    <BLANKLINE>
    [[decided]]
    experiment = "e"
    name = "c < 1"
    estimates = [
        "ring",
    ]
    """
    index: dict[tuple[str, str], list[str]] = {}
    for out in outcomes:
        for b, _ in out.flips():
            index.setdefault(b.key, []).append(out.estimate.name)
    head = (
        f"# Written by `{command}` (docs/estimates.md): the published values and claims\n"
        "# whose verdict a candidate of a preset estimate changes.\n"
    )
    rows = [{"experiment": e, "name": n, "estimates": names} for (e, n), names in index.items()]
    return head + ("\n" + tomli_w.dumps({"decided": rows}) if rows else "")


def decided(path: Path | None = None) -> dict[tuple[str, str], list[str]]:
    """Read the index :func:`index_toml` wrote (:data:`INDEX` by default).

    Maps (experiment, value or claim) to the estimates that change its
    verdict. A missing file gives an empty index (nothing known to hang on
    an estimate).
    """
    path = INDEX if path is None else path
    if not path.is_file():
        return {}
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    return {(d["experiment"], d["name"]): list(d["estimates"]) for d in doc.get("decided", [])}


@interruptible
def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nicsim.studies.sensitivity [EXPERIMENT ...] --out FILE``."""
    ap = CommandLine(
        prog="python -m nicsim.studies.sensitivity", description=__doc__.splitlines()[0]
    )
    ap.add_argument("experiments", nargs="*", default=["all"], help="experiment ids or groups")
    ap.add_argument(
        "--estimate",
        action="append",
        default=None,
        metavar="NAME",
        help="run only this estimate (repeatable; default: all of estimates.toml)",
    )
    ap.add_argument("--jobs", type=int, default=None, help="local worker processes")
    ap.add_argument("--quick", action="store_true", help="run the experiments' quick mode")
    ap.add_argument("--seed", type=int, default=runner.DEFAULT_SEED, help="base seed (default 1)")
    ap.add_argument("--out", type=Path, default=None, help="Markdown file to write (else stdout)")
    ap.add_argument(
        "--index",
        type=Path,
        default=None,
        help=f"also write the index validation.md reads (its place: {INDEX_COMMAND.split()[-1]})",
    )
    ap.add_argument(
        "--store",
        type=Path,
        default=None,
        help="keep finished runs in this directory: the same command then resumes",
    )
    a = ap.parse_args(argv)
    ids = _experiments.expand(a.experiments)
    estimates = load()
    if a.estimate:
        names = {e.name for e in estimates}
        unknown = [n for n in a.estimate if n not in names]
        if unknown:
            ap.error(f"--estimate {unknown[0]!r}: unknown; allowed: {', '.join(sorted(names))}")
        estimates = [e for e in estimates if e.name in a.estimate]
    check_seed(a.seed)
    for path, option in ((a.out, "--out"), (a.index, "--index")):
        if path is not None:
            outputs.check_file(path, option)
    outcomes = run(
        estimates,
        ids,
        jobs=a.jobs,
        quick=a.quick,
        seed=a.seed,
        note=lambda text: print(text, file=sys.stderr, flush=True),
        store=None if a.store is None else Store(a.store),
    )
    args = sys.argv[1:] if argv is None else argv
    command = " ".join(["python -m nicsim.studies.sensitivity", *args])
    text = render(outcomes, command=command)
    if a.index is not None:
        with outputs.atomic_file(a.index) as temp:
            temp.write_text(index_toml(outcomes, command=command))
    if a.out is None:
        print(text)
    else:
        with outputs.atomic_file(a.out) as temp:
            temp.write_text(text + "\n")
        flipped = sum(len(o.flips()) for o in outcomes)
        print(f"wrote {a.out}: {len(outcomes)} estimates, {flipped} verdicts changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
