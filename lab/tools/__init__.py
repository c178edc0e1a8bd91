# SPDX-License-Identifier: GPL-2.0
"""One module per external tool the lab runs: each builds the tool's
command line and parses what the tool prints."""
