"""``nicsim model``: the EMO analytic model's sums for a preset, printed term by term.

This module owns the ``model`` subcommand: it parses ``--layer`` and
``--sizes``, evaluates :mod:`nicsim.model` for each path and prints each
sum's terms per size (and plots them with ``--plot``). :mod:`nicsim.cli`
registers :func:`model_command` on its app, whose error contract it
follows: a bad input raises :class:`NicsimError`, which the app prints as
one line (exit 2). As there, annotations are evaluated when the function
is defined (no ``from __future__ import annotations``): typer reads them.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nicsim import model
from nicsim._core import NicsimError
from nicsim.cli.common import console
from nicsim.keys import Given, check_once, parse_given

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["model_command"]

#: The preset and the coalescing setting of ``nicsim model`` without ``--preset``
#: and ``--coalescing``.
DEFAULT_PRESET = "emo2004"
DEFAULT_COALESCING = "none"


def _parse_layer(text: str) -> model.Layer:
    """``name:cycles:on[:latency_ns[:overhead_cycles]]`` -> a layer."""
    parts = text.split(":")
    if not 3 <= len(parts) <= 5:
        raise NicsimError(
            f"--layer {text!r}: expected name:cycles:on[:latency_ns[:overhead_cycles]]"
        )
    try:
        numbers = [float(x) for x in [parts[1], *parts[3:]]]
    except ValueError:
        raise NicsimError(
            f"--layer {text!r}: cycles, latency_ns and overhead_cycles must be numbers"
        ) from None
    latency = numbers[1] if len(numbers) > 1 else 0.0
    overhead = numbers[2] if len(numbers) > 2 else 0.0
    return model.Layer(parts[0], numbers[0], parts[2], latency, overhead)


def _parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise NicsimError(
            f"--sizes {text!r}: expected comma-separated byte counts, e.g. 100,1000,8000"
        ) from None
    if not sizes or min(sizes) < 0:
        raise NicsimError(f"--sizes {text!r}: expected at least one size >= 0")
    return sizes


def _model_table(title: str, path: str, evals: list[model.Evaluation]) -> "Table":
    """One column per size; the terms of each sum, then the sums."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("sum / term")
    for e in evals:
        table.add_column(f"{e.size_bytes} B", justify="right")

    def rows(label: str, key: str, unit: str) -> None:
        terms = [dict(getattr(e, key)) for e in evals]
        for term in terms[0]:
            table.add_row(f"  {label}: {term} ({unit})", *[f"{t[term]:.4g}" for t in terms])

    rows("client to-app", "client_terms_us", "µs")
    rows(f"echo {path}", "echo_terms_us", "µs")
    table.add_row("latency = RTT/2 (µs)", *[f"{e.latency_us:.4g}" for e in evals])
    rows("echo-host overhead", "overhead_terms_cycles", "cycles")
    table.add_row("overhead (% of echo host)", *[f"{e.overhead_pct:.4g}" for e in evals])
    table.add_row("gap (µs)", *[f"{e.gap_us:.4g}" for e in evals])
    return table


def _model_given(preset: str, coalescing: str, given_preset: bool, given_coal: bool) -> list[Given]:
    """Return the scenario keys the command's own options set, as :class:`Given` values.

    A ``--set`` of one of them would silently replace what the option (or
    its default) says, the title of the table included: it is refused.
    """
    default = " (the default)"
    return [
        Given("preset", preset, f"--preset {preset}{'' if given_preset else default}"),
        Given(
            "nic",
            model.coalescing_options(coalescing),
            f"--coalescing {coalescing}{'' if given_coal else default}",
        ),
        Given("workload.kind", "", "--path (its echo workload)"),
        Given("workload.size_bytes", 0, "--sizes"),
    ]


def _check_plot_format(plot: Path) -> None:
    """Refuse a ``--plot`` file whose extension is no picture format matplotlib saves."""
    from nicsim.studies.plots_emo import MODEL_PLOT_FORMATS

    suffix = plot.suffix.lstrip(".").lower()
    if suffix not in MODEL_PLOT_FORMATS:
        what = f"extension .{suffix}" if suffix else "no extension"
        allowed = ", ".join(f".{name}" for name in MODEL_PLOT_FORMATS)
        raise NicsimError(
            f"--plot {plot}: {what}, not a picture format (allowed: {allowed}; "
            "the format follows the extension)"
        )


def model_command(
    preset: Annotated[
        str | None, typer.Option(help="Preset name or preset TOML file.  [default: emo2004]")
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option(help="to-nic | to-kernel | to-app (repeatable; default: all three)."),
    ] = None,
    coalescing: Annotated[
        str | None, typer.Option(help="none | default | max.  [default: none]")
    ] = None,
    sizes: Annotated[str, typer.Option(help="Message sizes in bytes, comma-separated.")] = (
        "100,1000,4000,8000"
    ),
    layer: Annotated[
        list[str] | None,
        typer.Option(
            help="Extra layer name:cycles:on[:latency_ns[:overhead_cycles]] (repeatable)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any scenario key: key.path=value (TOML value)."),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            help="Also plot latency and overhead vs size; the format follows the extension "
            "(.png, .pdf, .svg, ...)."
        ),
    ] = None,
) -> None:
    """Evaluate the EMO model for a preset and configuration; print each sum's terms."""
    from nicsim import outputs

    given_preset, given_coalescing = preset is not None, coalescing is not None
    preset = preset if preset is not None else DEFAULT_PRESET
    coalescing = coalescing if coalescing is not None else DEFAULT_COALESCING
    if plot is not None:
        from nicsim.scenario import preset_path

        # An input named as the output is the worse mistake: said first.
        outputs.check_apart([("--plot", plot)], [("--preset", preset_path(preset))])
        _check_plot_format(plot)
        outputs.check_file(plot, "--plot")
    paths = path or list(model.PATHS)
    size_list = _parse_sizes(sizes)
    layers = [_parse_layer(text) for text in layer or []]
    sets = parse_given(set_ or [], example="host.wait=poll")
    check_once([*_model_given(preset, coalescing, given_preset, given_coalescing), *sets])
    overrides: dict[str, Any] = {item.path: item.value for item in sets}
    results: dict[str, list[model.Evaluation]] = {}
    for name in paths:
        results[name] = model.evaluate(
            preset,
            path=name,
            coalescing=coalescing,
            sizes=size_list,
            layers=layers,
            overrides=overrides,
        )
    for name, evals in results.items():
        console().print(
            _model_table(f"EMO {name} on {preset}, coalescing {coalescing}", name, evals)
        )
    if plot is not None:
        from nicsim.studies.plots_emo import plot_model

        with outputs.atomic_file(plot) as temp:
            plot_model(results, f"EMO model: {preset}, coalescing {coalescing}", temp)
        console().print(f"wrote {plot}")
