"""The Python tests' checks: each prints FAIL with its detail, and the test
ends with one summary line and exit 1 when any failed."""
import sys


class Checks:
    def __init__(self, name):
        self.name = name
        self.passes = 0
        self.failures = 0

    def __call__(self, what, ok, detail=""):
        if ok:
            self.passes += 1
        else:
            self.failures += 1
            print("FAIL: " + what + (": " + detail if detail else ""))

    def finish(self):
        print("%s: %d passed, %d failed" % (self.name, self.passes, self.failures))
        sys.exit(1 if self.failures else 0)
