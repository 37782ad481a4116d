"""``python -m nicsim``: the same command line as the ``nicsim`` script."""

if __name__ == "__main__":
    # Imported here, not at the top: spawned worker processes import this
    # module as ``__mp_main__`` and must not load the command line.
    from nicsim.cli import app

    app(prog_name="nicsim")
