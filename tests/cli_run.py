"""Running the command line in-process for the CLI tests."""

from __future__ import annotations

from structlin.cli import main


def run(capsys, *argv):
    """The exit status, stdout and stderr of the command line ``argv``; a parser error is its SystemExit code."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err
