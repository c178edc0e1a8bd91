# SPDX-License-Identifier: GPL-2.0
"""python3 -m lab.topology up|down|... (see lab.topology)."""

import sys

from lab.topology import main

sys.exit(main())
