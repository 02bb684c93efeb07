#!/usr/bin/python3
"""Validates Kubernetes manifests against the API's own types.

Usage: k8s_validate.py FILE...

Each YAML document is read into the model class of its apiVersion and kind
from Debian's python3-kubernetes (generated from the Kubernetes OpenAPI
schema): a missing required field or a value of the wrong type raises, and a
key the schema does not have (a typo, a field in the wrong place) is lost on
the way, which the round trip back to a dict catches. Prints one line per
document; exit 1 when any is invalid.
"""
import sys

import kubernetes.client as k8s
import yaml

KINDS = {("apps/v1", "Deployment"): "V1Deployment", ("v1", "Service"): "V1Service",
         ("batch/v1", "Job"): "V1Job", ("apps/v1", "DaemonSet"): "V1DaemonSet"}


def same(a, b, path="$"):
    """Differences between the manifest and its round trip (quantities may come back as strings)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in set(a) | set(b):
            if key not in b:
                out.append("%s.%s: not in the schema" % (path, key))
            elif key not in a:
                continue
            else:
                out += same(a[key], b[key], path + "." + key)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return ["%s: %d items came back as %d" % (path, len(a), len(b))]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in same(x, y, "%s[%d]" % (path, i))]
    return [] if a == b or str(a) == str(b) else ["%s: %r came back as %r" % (path, a, b)]


api = k8s.ApiClient()
bad = 0
for name in sys.argv[1:]:
    with open(name) as f:
        for doc in yaml.safe_load_all(f):
            if doc is None:
                continue
            key = (doc.get("apiVersion"), doc.get("kind"))
            if key not in KINDS:
                print("%s: %s/%s: not a kind this check knows" % (name, *key))
                bad += 1
                continue
            try:
                model = api._ApiClient__deserialize(doc, KINDS[key])
                problems = same(doc, api.sanitize_for_serialization(model))
            except (ValueError, TypeError) as e:
                problems = [str(e)]
            print("%s: %s %s: %s" % (name, key[1], doc.get("metadata", {}).get("name"),
                                     "valid" if not problems else "; ".join(problems)))
            bad += bool(problems)
sys.exit(1 if bad else 0)
