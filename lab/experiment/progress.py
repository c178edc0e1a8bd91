# SPDX-License-Identifier: GPL-2.0
"""The overall progress of an experiment and an estimate of the time
left.  The plan is each batch's seconds of traffic (its longest run,
repetitions included); a batch takes longer than that (topology, warm-up,
teardown, analysis), by a factor that the batches done so far measure.
Until one is done, the factor is a prior: 1.25, about what the batches
of the shipped experiments took under TCG."""

PRIOR = 1.25


class Progress:
    """Progress over batches planned to last planned[i] seconds each."""

    def __init__(self, planned, prior=PRIOR):
        if not planned or any(p < 0 for p in planned):
            raise ValueError("a plan is one or more durations >= 0")
        self.planned = [float(p) for p in planned]
        self.prior = prior
        self.done = 0           # batches finished
        self.done_took = 0.0    # seconds they took

    def finish(self, took):
        """The next batch finished after took seconds."""
        if self.done >= len(self.planned):
            raise ValueError("every batch is already finished")
        self.done += 1
        self.done_took += took

    def factor(self):
        """Seconds a batch takes per second of its plan."""
        planned = sum(self.planned[:self.done])
        if planned <= 0:
            return self.prior
        return self.done_took / planned

    def left(self, elapsed):
        """Seconds left, estimated elapsed seconds into the batch now
        running (the one after those finished)."""
        f = self.factor()
        if self.done >= len(self.planned):
            return 0.0
        now = max(self.planned[self.done] * f - elapsed, 0.0)
        return now + f * sum(self.planned[self.done + 1:])

    def line(self, elapsed):
        """One line: batches done, percent of the estimated whole, time
        spent and left."""
        spent = self.done_took + elapsed
        left = self.left(elapsed)
        pct = 100.0 * spent / (spent + left) if spent + left > 0 else 100.0
        return (f"overall {self.done}/{len(self.planned)} batches done, "
                f"{pct:.0f} % after {_hms(spent)}, about {_hms(left)} left")


def _hms(s):
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"
