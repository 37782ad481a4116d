"""Bad options of ``nicsim model --plot`` and of ``python -m nicsim.studies.fit`` / ``holdout``.

Each is one line and exit status 2 before any work (no table printed, no
fit started); Ctrl-C on a fit is one line and status 130, as on ``nicsim``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nicsim._core import NicsimError
from nicsim.studies import fit, holdout
from test_cli import assert_one_error_line, nicsim_cli


@pytest.mark.parametrize("name", ["p.csv", "p", "p.tmp", "p.pgf"])
def test_a_plot_file_that_is_no_picture_format_is_refused_before_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    target = tmp_path / name
    code, out, err = nicsim_cli(capsys, "model", "--plot", str(target))
    assert code == 2 and out == "", out
    assert_one_error_line(err)
    suffix = target.suffix
    assert (f"extension {suffix}" if suffix else "no extension") in err, err
    assert "allowed: .png, .pdf, .svg" in err and str(target) in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.core
@pytest.mark.parametrize("name", ["p.png", "p.PDF", "p.svg", "p.jpg"])
def test_a_plot_is_written_in_the_format_of_its_extension(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    target = tmp_path / name
    code, _, err = nicsim_cli(capsys, "model", "--sizes", "100,1000", "--plot", str(target))
    assert code == 0, err
    head = target.read_bytes()[:16]
    magic = {".png": b"\x89PNG", ".pdf": b"%PDF", ".svg": b"<?xml", ".jpg": b"\xff\xd8"}
    assert head.startswith(magic[target.suffix.lower()]), head
    assert [p.name for p in tmp_path.iterdir()] == [name]


def never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the fit started")


def run_main(main: Any, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return int(code), out, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--max-evals", "0"], "--max-evals: '0' (allowed: a whole number, at least 1)"),
        (["--starts", "0"], "--starts: '0' (allowed: a whole number, at least 1)"),
        (["--starts", "-3"], "--starts: '-3' (allowed: a whole number, at least 1)"),
        (["--starts", "two"], "--starts: 'two'"),
        (["--out", "x.md"], "--out x.md: only with --holdout"),
        (["--holdout", "omx-mq", "--out", "."], "--out .: is a directory"),
        (["--holdout", "omx-mq", "--out", "/no/such/dir/x.md"], "does not exist"),
        (["--write", "/no/such/dir"], "--write /no/such/dir: no such directory"),
    ],
)
def test_bad_fit_options_are_one_line_before_the_fit(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    needle: str,
) -> None:
    monkeypatch.setattr(fit, "fit", never)
    monkeypatch.setattr(fit, "run", never)
    code, out, err = run_main(fit.main, capsys, *argv)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert needle in err, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--out", "."], "--out .: is a directory"),
        (["--max-evals", "0"], "--max-evals: '0'"),
        (["--starts", "-3"], "--starts: '-3'"),
    ],
)
def test_bad_holdout_options_are_one_line_before_the_fit(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    needle: str,
) -> None:
    monkeypatch.setattr(holdout, "run", never)
    code, out, err = run_main(holdout.main, capsys, *argv)
    assert code == 2 and out == ""
    assert_one_error_line(err)
    assert needle in err, err


def test_the_starts_given_are_the_starts_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[int, int]] = []

    def fake_run(study: str, *, starts: int, max_evals: int) -> str:
        seen.append((starts, max_evals))
        return f"table of {study}"

    monkeypatch.setattr(holdout, "run", fake_run)
    code, out, _ = run_main(holdout.main, capsys, "--starts", "1", "--max-evals", "2")
    assert code == 0 and seen == [(1, 2), (1, 2)]
    assert out == "table of omx-coal\n\ntable of omx-mq\n"


def test_the_fit_refuses_counts_below_one_by_name() -> None:
    for kwargs in ({"starts": 0}, {"max_evals": 0}, {"starts": -3}, {"max_evals": True}):
        with pytest.raises(NicsimError, match=f"{next(iter(kwargs))} = .*at least 1"):
            fit.fit(**kwargs)


@pytest.mark.parametrize("module", [fit, holdout])
def test_ctrl_c_on_a_fit_is_one_line_and_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], module: Any
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "run", interrupted)
    monkeypatch.setattr(fit, "fit", interrupted)
    code, out, err = run_main(module.main, capsys)
    assert code == 130 and out == ""
    assert err == "error: interrupted\n"


def test_holdout_out_is_written_whole(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(holdout, "run", lambda study, **_: f"table of {study}")
    target = tmp_path / "h.md"
    code, out, _ = run_main(holdout.main, capsys, "--out", str(target))
    assert code == 0 and out == ""
    assert target.read_text() == "table of omx-coal\n\ntable of omx-mq\n"
    assert [p.name for p in tmp_path.iterdir()] == ["h.md"]
