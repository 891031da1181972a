"""``python -m osw_studio``: the same as the ``osw-studio`` command."""

import sys

from osw_studio.cli import main

sys.exit(main())
