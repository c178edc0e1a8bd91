# SPDX-License-Identifier: GPL-2.0
"""make demo: run.sh runs the parts (<part>.sh) in the guest; tltcp.py and
multfrc.py print the reports of the parts of the same names."""
