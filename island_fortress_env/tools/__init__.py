"""The command line and what it runs: ``cli`` (``island-fortress``), ``demo``, ``play``,
``replay``, ``bench`` and ``doc_tables`` (the README's generated tables). The top layer:
nothing in the package imports it."""
