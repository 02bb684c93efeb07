#!/usr/bin/python3
"""Writes a docker save whose one gzip layer holds N empty files (a million by
default: 512 MB of tar headers, about 4 MB compressed), streamed, so neither
this script nor the file ever holds the layer's tar.

Usage: make_bomb.py OUT.tar [N]
"""
import hashlib
import io
import json
import sys
import tarfile
import zlib

out, count = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000

# One ustar header, name field blank; each entry's checksum is the blank
# header's plus the bytes of its name.
base = bytearray(512)
base[100:108] = b"0000644\0"
base[108:116] = b"0000000\0"
base[116:124] = b"0000000\0"
base[124:136] = b"00000000000\0"
base[136:148] = b"00000000000\0"
base[156:157] = b"0"
base[257:265] = b"ustar\x0000"
base[148:156] = b"        "
base_sum = sum(base)

compressor = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip wrapper
digest = hashlib.sha256()  # the uncompressed tar: the config's diff_id
layer = io.BytesIO()
batch = bytearray()
for i in range(count):
    name = b"f/%07d" % i
    header = bytearray(base)
    header[0:len(name)] = name
    header[148:156] = b"%06o\0 " % (base_sum + sum(name))
    batch += header
    if len(batch) >= 1 << 20:
        digest.update(batch)
        layer.write(compressor.compress(bytes(batch)))
        batch.clear()
batch += bytes(1024)  # end of archive
digest.update(batch)
layer.write(compressor.compress(bytes(batch)))
layer.write(compressor.flush())

blob = layer.getvalue()
config = json.dumps({"architecture": "amd64", "os": "linux",
                     "rootfs": {"type": "layers", "diff_ids": ["sha256:" + digest.hexdigest()]},
                     "history": [{"created_by": "a million empty files"}]}).encode()
manifest = json.dumps([{"Config": "config.json", "RepoTags": ["bomb:1"],
                        "Layers": ["layer.tar.gz"]}]).encode()
with tarfile.open(out, "w") as save:
    for name, data in (("manifest.json", manifest), ("config.json", config), ("layer.tar.gz", blob)):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        save.addfile(info, io.BytesIO(data))
