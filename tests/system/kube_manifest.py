#!/usr/bin/python3
"""Reads and adapts a Deployment that `imgsmith gen --k8s` wrote, for the
kube play test.

Usage:
  kube_manifest.py get FILE EXPR
      prints a Python expression over the manifest `m`, its pod spec `pod`
      and its first container `c` (lists print as words, one per space)
  kube_manifest.py with-gpu FILE OUT DRIVER_DIR DEV_DIR
      writes OUT: FILE plus what NVIDIA's device plugin and container
      toolkit add to a container that was given a GPU, with stand-ins: the
      driver's libraries (DRIVER_DIR, mounted where the GPU Operator mounts
      them, /usr/local/nvidia/lib64, and on LD_LIBRARY_PATH) and the device
      nodes (DEV_DIR, named to the probe by IMGSMITH_PROBE_DEV). Nothing
      the generator wrote is changed.
"""
import sys

import yaml


def pod_of(manifest):
    return manifest["spec"]["template"]["spec"]


def get(path, expr):
    with open(path) as f:
        m = yaml.safe_load(f)
    pod = pod_of(m)
    c = pod["containers"][0]
    value = eval(expr, {}, {"m": m, "pod": pod, "c": c})  # noqa: S307 (the test's own expressions)
    print(" ".join(map(str, value)) if isinstance(value, list) else value)


def with_gpu(path, out, driver_dir, dev_dir):
    with open(path) as f:
        m = yaml.safe_load(f)
    pod = pod_of(m)
    c = pod["containers"][0]
    pod.setdefault("volumes", []).extend([
        {"name": "standin-driver", "hostPath": {"path": driver_dir, "type": "Directory"}},
        {"name": "standin-dev", "hostPath": {"path": dev_dir, "type": "Directory"}}])
    c.setdefault("volumeMounts", []).extend([
        {"name": "standin-driver", "mountPath": "/usr/local/nvidia/lib64", "readOnly": True},
        {"name": "standin-dev", "mountPath": "/run/standin-dev", "readOnly": True}])
    c.setdefault("env", []).extend([
        {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"},
        {"name": "IMGSMITH_PROBE_DEV", "value": "/run/standin-dev"}])
    with open(out, "w") as f:
        yaml.safe_dump(m, f, sort_keys=False)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "get":
        get(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "with-gpu":
        with_gpu(*sys.argv[2:])
    else:
        sys.exit(__doc__)
