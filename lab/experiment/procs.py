# SPDX-License-Identifier: GPL-2.0
"""The processes a run starts in the guest: waiting for one to be ready,
stopping one, stopping once."""

import subprocess
import time


def wait_for(what, test, tries=100):
    """Until test() holds, every 0.1 s, at most tries times; then
    RuntimeError "<what> did not start"."""
    for _ in range(tries):
        if test():
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start")


def terminate(p, timeout=10):
    """SIGTERM p and wait for it; SIGKILL it if it is still there after
    timeout seconds.  Returns False if it had to be killed."""
    p.terminate()
    try:
        p.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return False


def once(fn):
    """fn, called at most once: later calls return the first's result
    (a capture's stop is called on the way through and again, to be
    sure, on the way out)."""
    done = []

    def call(*args):
        if not done:
            done.append(fn(*args))
        return done[0]
    return call


def read_text(path):
    """The file's text, "" if it cannot be read (yet)."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""
