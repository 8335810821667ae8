"""`python -m memory_lens` runs the command-line interface."""

from memory_lens.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
