"""An analyze JSON report of an image whose RUN steps installed packages:
its waste holds the package manager's state (dpkg's status at least), marked
package_state, and no finding names a state file or calls the rewrites a
metadata-only change. Prints what it saw.
Usage: package_state_findings.py REPORT.json"""
import json
import sys

STATE = ("/var/lib/dpkg/", "/var/cache/debconf/", "/etc/ld.so.cache", "/etc/passwd", "/etc/group",
         "/etc/shadow", "/etc/gshadow", "/var/log/apt/", "/var/log/dpkg.log", "/var/cache/ldconfig/")

report = json.load(open(sys.argv[1]))
state = sorted(w["path"] for w in report["waste"] if w.get("package_state"))
named = [p["path"] for f in report["findings"] for p in f["paths"] if p["path"].startswith(STATE)]
ids = [f["id"] for f in report["findings"]]
print("package_state_findings: state waste %s; findings %s; state files a finding names: %s" % (state, ids, named))
sys.exit(0 if "/var/lib/dpkg/status" in state and not named and "metadata-only-readd" not in ids else 1)
