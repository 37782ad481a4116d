"""The ``nicsim`` app: its subcommands, and its error contract around them.

:data:`app` registers the subcommands of the modules beside this one (run,
sweep, reproduce, model, replay, bench) and owns ``presets`` and
``version``. Around every command it keeps the error contract of
:mod:`nicsim.cli.exits`: bad CLI usage or a :class:`~nicsim.NicsimError` is
one ``error: ...`` line and status 2, an interruption 128 + the signal.
The work itself is done by :mod:`nicsim` (campaigns that write files by
:mod:`nicsim.studies.campaign`). Importing it loads neither pandas nor
matplotlib.

It evaluates its annotations when it defines its functions, as every
command module does (:mod:`nicsim.cli` says why).
"""

from pathlib import Path
from typing import Annotated, Any

import typer

import nicsim
from nicsim import _core, _launch
from nicsim._core import NicsimError
from nicsim.cli import bench, model, replay, run, sweep
from nicsim.cli.exits import EXIT_BAD_INPUT, EXIT_INTERRUPTED, fail, stopped
from nicsim.scenario import Scenario, loads, read_toml_file

__all__ = ["app"]


class _App(typer.Typer):
    """Typer app whose errors are one line on stderr, status 2 (128 + the signal on one)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("standalone_mode", False)
        try:
            _launch.command_started()
            status = super().__call__(*args, **kwargs)
            if status == EXIT_INTERRUPTED:  # typer's status for a KeyboardInterrupt in a command
                raise KeyboardInterrupt
            _launch.command_ended()
        except typer.TyperException as err:  # bad CLI usage or values
            if not err.format_message():  # no_args_is_help: the help is already shown
                raise SystemExit(EXIT_BAD_INPUT) from None
            fail(err.format_message())
        except NicsimError as err:
            fail(str(err))
        except (typer.Abort, KeyboardInterrupt):  # Ctrl-C outside a command's own handler
            stopped()
        raise SystemExit(status if isinstance(status, int) else 0)


app = _App(
    name="nicsim",
    help="Simulate NIC-assisted message passing and reproduce published studies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
presets_app = typer.Typer(help="List, show and copy platform presets.", no_args_is_help=True)
app.add_typer(presets_app, name="presets")
app.command("replay")(replay.replay_command)
app.command("run")(run.run_command)
app.command("sweep")(sweep.sweep_command)
app.command("reproduce")(sweep.reproduce_command)
app.command("model")(model.model_command)
app.command("bench")(bench.bench_command)


@presets_app.command("list")
def presets_list() -> None:
    """List the embedded presets, each with its one-line description."""
    for name in nicsim.presets():
        description = loads(nicsim.preset_toml(name), f"preset {name!r}").get("description", "")
        print(f"{name}\t{description}")


@presets_app.command("show")
def presets_show(
    name: Annotated[str, typer.Argument(help="Preset name or preset TOML file.")],
) -> None:
    """Print a preset's TOML: an embedded one, or a preset file once the core accepts it."""
    print(_preset_text(name), end="")


def _preset_text(name: str) -> str:
    """Return a preset's TOML: an embedded one's, or a preset file's once the core accepts it."""
    from nicsim.scenario import is_preset_file

    if name in nicsim.presets() or not is_preset_file(name):
        return nicsim.preset_toml(name)
    text = read_toml_file(name, "preset file")
    loads(text, f"preset file {name!r}")
    _core.check(Scenario(preset=name).to_toml())
    return text


@presets_app.command("copy")
def presets_copy(
    name: Annotated[str, typer.Argument(help="Preset name or preset TOML file.")],
    dest: Annotated[Path, typer.Argument(help="Destination file.")],
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Copy a preset (embedded, or a file the core accepts) to edit and pass as --preset."""
    from nicsim import outputs

    text = _preset_text(name)
    outputs.check_apart([("dest", dest)], [("name", name if Path(name).exists() else None)])
    outputs.check_file(dest, "dest")
    if dest.exists() and not force:
        fail(f"{dest} exists; pass --force to overwrite")
    with outputs.atomic_file(dest) as temp:
        temp.write_text(text, encoding="utf-8")
    print(f"wrote {dest}")


@presets_app.command("from-ethtool")
def presets_from_ethtool(
    file: Annotated[Path, typer.Argument(help="What `ethtool -c DEV` printed.")],
    preset: Annotated[str, typer.Option(help="Preset name or preset TOML file.")],
    out: Annotated[Path, typer.Option(help="Scenario TOML file to write.")],
    rings: Annotated[Path | None, typer.Option(help="What `ethtool -g DEV` printed.")] = None,
    channels: Annotated[Path | None, typer.Option(help="What `ethtool -l DEV` printed.")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Write a scenario from a NIC's ethtool settings; list each value it could not map."""
    from nicsim import ethtool

    print(ethtool.report(ethtool.write(file, preset, out, rings, channels, force), out), end="")


@app.command("version")
def version_command() -> None:
    """Print the nicsim version."""
    print(nicsim.__version__)
