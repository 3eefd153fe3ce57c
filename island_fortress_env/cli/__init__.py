"""The command line, ``island-fortress``: ``app`` (the table of commands and ``main``), one
module per command (``add_arguments`` + ``run``), ``arguments`` (the parser and argparse types
every command shares) and the commands' own helpers (``entries``, ``bench_*``). The top layer:
nothing in the package imports it."""
