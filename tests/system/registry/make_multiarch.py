#!/usr/bin/env python3
"""Builds a multi-platform OCI layout from two single-image OCI archives:
a nested index (linux/amd64, linux/arm64, and an attestation manifest as
BuildKit writes it), tagged TAG, for `skopeo copy --all oci:DIR:TAG`.

Usage: make_multiarch.py OUT_DIR AMD64_ARCHIVE ARM64_ARCHIVE TAG
"""
import hashlib
import json
import os
import sys
import tarfile

out, amd64, arm64, tag = sys.argv[1:5]
os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
descriptors = []
for archive, arch in ((amd64, "amd64"), (arm64, "arm64")):
    with tarfile.open(archive) as t:
        for member in t.getmembers():
            if member.isfile() and member.name.lstrip("./").startswith("blobs/"):
                data = t.extractfile(member).read()
                with open(os.path.join(out, member.name.lstrip("./")), "wb") as f:
                    f.write(data)
        index = json.load(t.extractfile([m for m in t.getmembers() if m.name.lstrip("./") == "index.json"][0]))
    desc = dict(index["manifests"][0])
    desc.pop("annotations", None)
    desc["platform"] = {"os": "linux", "architecture": arch}
    descriptors.append(desc)
attestation = dict(descriptors[0])
attestation["platform"] = {"os": "unknown", "architecture": "unknown"}
attestation["annotations"] = {"vnd.docker.reference.type": "attestation-manifest"}
nested = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                     "manifests": descriptors + [attestation]}).encode()
digest = hashlib.sha256(nested).hexdigest()
with open(os.path.join(out, "blobs", "sha256", digest), "wb") as f:
    f.write(nested)
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:" + digest,
        "size": len(nested), "annotations": {"org.opencontainers.image.ref.name": tag}}]}, f)
with open(os.path.join(out, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
