# SPDX-License-Identifier: GPL-2.0
"""python3 -m lab.experiment run|analyze|list (see lab.experiment)."""

import sys

from lab.experiment import main

sys.exit(main())
