# SPDX-License-Identifier: GPL-2.0
"""The network lab: what builds, drives and measures the test networks.

Run its programs as modules from the repository's top directory (or with
it on PYTHONPATH), e.g. python3 -m lab.experiment list.

  topology/     network-namespace topologies (dumbbell, collapse)
  tools/        one module per external tool: runs it, parses its output
  transports.py what differs between transports, in one table
  metrics.py    the papers' metrics, each defined once
  measure.py    numbers from the tools' output, for the shell selftests
  reports.py    reading the JSON files that tools and runs write
  experiment/   experiments: a TOML file in experiments/ in, a report out
  demo/         make demo: its parts (shell) and their reports (Python)
  vm/           the VM runner behind make vm (virtme-ng)
  tap_summary.py  make check's closing count
  tests/        the unit tests (make unit)
"""

import os

# The repository's top directory.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
