"""`python -m sitegen`, and the `sitegen` program (`main`)."""

import sys


def main() -> None:
    """Load the command line, then run it. Loading takes a few tenths of a second: Ctrl-C then stops it with a
    word, not a traceback, before anything could be read or written."""
    try:
        from sitegen.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted; nothing was written\n")
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
