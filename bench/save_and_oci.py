"""Writes one uncompressed layer as an image twice: a `docker save` archive
(NAME.tar, the layer as stored) and an OCI layout archive (NAME.oci.tar, the
layer gzip-compressed). Shared by the benchmarks (imported)."""
import gzip
import hashlib
import io
import json
import tarfile


def _add(t, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))


def _blob(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write(plain, name, tag, created_by):
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": [_blob(plain)]},
                         "history": [{"created_by": created_by}]}).encode()
    with tarfile.open(name + ".tar", "w") as t:
        _add(t, "l0/layer.tar", plain)
        _add(t, "config.json", config)
        _add(t, "manifest.json", json.dumps([{"Config": "config.json", "RepoTags": [tag],
                                              "Layers": ["l0/layer.tar"]}]).encode())
    gz = gzip.compress(plain, compresslevel=1)
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": _blob(config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": _blob(gz), "size": len(gz)}]}).encode()
    index = json.dumps({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": _blob(manifest), "size": len(manifest),
        "annotations": {"org.opencontainers.image.ref.name": tag.split(":")[-1]}}]}).encode()
    with tarfile.open(name + ".oci.tar", "w") as t:
        _add(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(t, "index.json", index)
        for data in (config, manifest, gz):
            _add(t, "blobs/sha256/" + _blob(data)[7:], data)
