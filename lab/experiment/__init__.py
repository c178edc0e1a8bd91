# SPDX-License-Identifier: GPL-2.0
"""Experiments: a declarative description in, figures and a table out.

An experiment is a TOML file, experiments/<name>.toml, that names a
topology, runs (sets of flows that share it), the flows of each run
(transport, congestion control, traffic pattern, start and stop), the
kernel module settings a run needs, the figures to draw and the paper's
numbers to set ours beside.  Documentation/experiments.rst describes the
format.  This program (python3 -m lab.experiment) has two halves:

  run NAME [--short] [--out DIR] [--only GLOB] [--duration S]
      in the guest (make experiment NAME=...): build each run's topology,
      start its flows (tools/flowgen), collect their JSON reports under
      DIR/<run>/, then analyze.
  analyze DIR
      anywhere: per-flow and per-run metrics (lab/metrics.py) into
      DIR/metrics.json, plots into DIR/*.png, a Markdown report with our
      figures beside the paper's into DIR/README.md, and the experiment's
      checks as TAP on standard output; exit 1 if a check failed (and
      after `run`, if a run failed).
  list
      the experiments and their short variants.

Runs whose module settings agree may share the guest at once (the
experiment's `parallel`); runs with different settings of a module take
turns, because module parameters are global, and so does a run that
records the tcp_probe tracepoint (tracing is global too).  A run repeated
N times (`repeat`) runs N times in turn, into DIR/<run>/, DIR/<run>@2/,
...; its metrics are the means over the repetitions, with 95 %
confidence intervals.

The modules, in the order a run goes through them:

  spec.py      load and check a description, expand it into runs, flows
  schedule.py  which runs share the guest, in what order (run_all)
  run.py       one run: its topology, receivers, senders and run.json
  captures.py  pcap, tcp_probe, ss samples; tunnels; loss steps
  procs.py     waiting for and stopping the processes a run starts
  analysis.py  the metrics in a run's directory, over repetitions too
  plots.py     the figures
  report.py    metrics.json, the checks and README.md (analyze)
  __main__.py  the command line
"""

DESCRIPTION = __doc__.split("\n")[0]
