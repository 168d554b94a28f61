# SPDX-License-Identifier: Apache-2.0
"""What the CPU tests of the benchmark summaries (test_*_summary.py) share: checks that collect
their failures and report them at the end, so that one run shows every one."""


class Checks:
    """check(condition, what) records `what` when the condition is false; finish() prints the
    failures and a verdict line, and returns the exit status."""

    def __init__(self, name):
        self.name = name
        self.failures = []

    def __call__(self, condition, what):
        if not condition:
            self.failures.append(what)

    def finish(self):
        for what in self.failures:
            print(f"FAIL: {what}")
        print(f"{self.name}: " + ("ok" if not self.failures else f"{len(self.failures)} failures"))
        return 1 if self.failures else 0
