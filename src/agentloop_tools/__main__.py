"""``python -m agentloop_tools``: the ``agentloop-tools`` command line."""

import sys

from agentloop_tools.cli import main

sys.exit(main())
