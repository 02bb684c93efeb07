"""same_report.py A B [KEY...]: whether two `analyze --format json` reports
of one image agree but for how the image was read ("io", "source") and the
KEYs given: a top-level key, or KEY[].FIELD for a field of every item of a
top-level list ("layers[].listing"). Prints "same" or the keys that differ;
exits 1 when they differ. Used by tests/system/docker_test.sh and
bench/docker.sh."""
import json
import sys


def differing(a, b, ignored=()):
    """The top-level keys on which reports a and b differ, io and source aside."""
    for d in (a, b):
        for k in ("io", "source", *ignored):
            if "[]." in k:
                top, field = k.split("[].", 1)
                for item in d.get(top) or []:
                    item.pop(field, None)
            else:
                d.pop(k, None)
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    diff = differing(a, b, sys.argv[3:])
    print("differ in: " + ", ".join(diff) if diff else "same")
    sys.exit(1 if diff else 0)
