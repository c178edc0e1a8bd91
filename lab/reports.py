# SPDX-License-Identifier: GPL-2.0
"""Reading the JSON files the tools and the runs write (flowgen's and
tsm's reports, run.json, experiment.json)."""

import json


def load_json(path):
    """The file's JSON, or None if it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
