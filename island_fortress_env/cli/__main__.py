"""``python -m island_fortress_env.cli``: the ``island-fortress`` command."""

import sys

from island_fortress_env.cli.app import main

sys.exit(main())
