"""`python -m collide_farm`: the `collide` command."""

import sys

from .cli import main

sys.exit(main())
