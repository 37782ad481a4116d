"""``python -m nicsim``: the same command line as the ``nicsim`` script."""

from nicsim.cli import app

if __name__ == "__main__":
    app(prog_name="nicsim")
