#!/usr/bin/env python3
"""Generate deterministic container image archives from a JSON layer spec.

Usage:
    make_image.py SPEC.json OUT --format {docker-legacy,oci-archive}
                  [--layer-compression {none,gzip}] [--gzip-level N] [-q]
    make_image.py SPEC.json --print-expected

Spec format:
    {"tag": "name:tag",
     "layers": [{"created_by": "RUN ...", "entries": [ENTRY, ...]}, ...]
     [, "env": ["KEY=VALUE", ...]]}           the config's Env, after PATH

A layer may instead be {"created_by": "ENV ...", "empty_layer": true}: it
only adds a history entry marked "empty_layer" and no filesystem layer.

ENTRY is one of:
    {"path": "a/b.txt", "size": N [, "seed": K]}   regular file, N bytes
    {"path": "m.safetensors", "size": N, "format": "safetensors"}
                                                    N bytes that are a real safetensors
                                                    file: its header (one U8 tensor),
                                                    then the tensor's bytes
    {"path": "f.npy", "size": N, "format": "numpy"} N bytes that are a real .npy file
                                                    (format 1.0, one uint8 array)
    {"path": "a/b.txt", "content": "text"}         regular file, given text
    {"path": "lib/x.so", "from": "/host/file"}     regular file, a file's bytes on this
                                                    machine (a real binary for a test)
    {"path": "a/dir", "type": "dir"}
    {"path": "a/link", "type": "symlink", "target": "..."}
    {"path": "a/hard", "type": "hardlink", "target": "a/b.txt"}
    {"path": "a/.wh.b.txt", "type": "whiteout"}     (also "a/.wh..wh..opq")
    {"generate": "many", "dir": "usr/share/x", "count": 100000,
     "size_min": 100, "size_max": 4000, "seed": 1
     [, "start": 1, "step": 1]}
Every entry except "generate" also accepts "mode" (an int, or an octal
string such as "0755").  Missing parent directories are added (mode 0755)
right before the first entry below them, once per layer; to give a
directory another mode, list it before its contents.  A hardlink's target
must be a regular file listed earlier in the same layer.

"generate" expands into files named f000001.dat ... f<count>.dat, grouped
into subdirectories d0000, d0001, ... of at most 1000 files each.  The name
of index i depends only on i and count, so a later layer can overwrite a
subset of an earlier one by repeating dir/count with a different seed and a
"start"/"step" that selects indices start, start+step, ... <= count.

Regular file content is a 1 MiB block (half random bytes, half word-like
text, so it compresses roughly like a real layer) generated once per seed
and repeated, starting at an offset derived from the path.  This keeps
multi-GB files cheap to produce while different paths get different bytes.

Output is byte-for-byte reproducible: fixed mtime, uid/gid 0, empty
user/group names, gzip headers without name or timestamp.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import struct
import signal
import sys
import tarfile
import tempfile
import time
import zlib

PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "make_image.py"

# Fixed timestamp for every tar header and "created" field (2023-11-14).
MTIME = 1_700_000_000
CREATED = "2023-11-14T22:13:20Z"

BLOCK_SIZE = 1 << 20
SEGMENT_SIZE = 64 << 10
COPY_BUF = 1 << 20
FILES_PER_DIR = 1000

ENV_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

MT_OCI_INDEX = "application/vnd.oci.image.index.v1+json"
MT_OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"
MT_OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"

WHITEOUT_PREFIX = ".wh."
OPAQUE_WHITEOUT = ".wh..wh..opq"


class SpecError(Exception):
    """The spec is malformed; reported with exit status 2."""


# ---------------------------------------------------------------------------
# Deterministic file content


_blocks = {}


def _make_block(seed):
    rng = random.Random(seed)
    vocab = []
    for _ in range(512):
        n = rng.randint(2, 10)
        vocab.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(n)))
    parts = []
    for _ in range(BLOCK_SIZE // SEGMENT_SIZE):
        if rng.random() < 0.5:
            parts.append(rng.randbytes(SEGMENT_SIZE))
        else:
            text = bytearray()
            while len(text) < SEGMENT_SIZE:
                words = rng.choices(vocab, k=12)
                text += (" ".join(words) + ("\n" if rng.random() < 0.3 else " ")).encode()
            parts.append(bytes(text[:SEGMENT_SIZE]))
    block = b"".join(parts)
    # Stored twice so any window of up to BLOCK_SIZE bytes starting at any
    # offset is one contiguous slice.
    return block + block


def block_for_seed(seed):
    block = _blocks.get(seed)
    if block is None:
        block = _blocks[seed] = _make_block(seed)
    return block


class PatternReader(io.RawIOBase):
    """Read-only stream of `size` bytes cycling through a seed's block."""

    def __init__(self, size, seed, path):
        super().__init__()
        self._block = block_for_seed(seed)
        self._pos = zlib.crc32(path.encode("utf-8")) % BLOCK_SIZE
        self._left = size

    def readable(self):
        return True

    def read(self, n=-1):
        if n is None or n < 0 or n > self._left:
            n = self._left
        chunks = []
        while n > 0:
            take = min(n, BLOCK_SIZE)
            chunks.append(self._block[self._pos:self._pos + take])
            self._pos = (self._pos + take) % BLOCK_SIZE
            self._left -= take
            n -= take
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# The JSON header of a generated safetensors file, padded with spaces (as the
# format allows) to a fixed length, so the data's length follows from the size.
SAFETENSORS_HEADER = 128


# numpy's .npy format 1.0: magic, version, the header's length, the header
# (a Python dict literal) padded with spaces and a newline to 128 bytes in all.
NUMPY_HEADER = 128


def numpy_header(size):
    text = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % (size - NUMPY_HEADER)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", NUMPY_HEADER - 10) + (text.ljust(NUMPY_HEADER - 11) + "\n").encode()


def safetensors_header(size):
    data = size - 8 - SAFETENSORS_HEADER
    text = json.dumps({"weight": {"dtype": "U8", "shape": [data], "data_offsets": [0, data]}})
    return struct.pack("<Q", SAFETENSORS_HEADER) + text.ljust(SAFETENSORS_HEADER).encode()


class PrefixedReader(io.RawIOBase):
    """`prefix`, then what `rest` reads."""

    def __init__(self, prefix, rest):
        super().__init__()
        self._prefix = prefix
        self._rest = rest

    def readable(self):
        return True

    def read(self, n=-1):
        # tarfile wants every read whole: a short one is "unexpected end of data".
        if not self._prefix:
            return self._rest.read(n)
        take = self._prefix if n is None or n < 0 else self._prefix[:n]
        self._prefix = self._prefix[len(take):]
        more = -1 if n is None or n < 0 else n - len(take)
        return take + (self._rest.read(more) if more != 0 else b"")


# ---------------------------------------------------------------------------
# Spec parsing and expansion


class Entry:
    __slots__ = ("kind", "path", "size", "mode", "link", "content", "seed", "format")

    def __init__(self, kind, path, size=0, mode=None, link="", content=None, seed=0, format=None):
        self.kind = kind  # "dir", "file", "symlink" or "hardlink"
        self.path = path
        self.size = size
        self.mode = mode
        self.link = link
        self.content = content
        self.seed = seed
        self.format = format


DEFAULT_MODES = {"dir": 0o755, "file": 0o644, "symlink": 0o777, "hardlink": 0o644}

ENTRY_KEYS = {
    "file": {"path", "type", "size", "seed", "content", "from", "mode", "format"},
    "dir": {"path", "type", "mode"},
    "symlink": {"path", "type", "target", "mode"},
    "hardlink": {"path", "type", "target", "mode"},
    "whiteout": {"path", "type", "mode"},
}
GENERATE_KEYS = {"generate", "dir", "count", "size_min", "size_max", "seed", "start", "step"}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _int_field(obj, key, where, default=None, minimum=0):
    if key not in obj:
        if default is None:
            raise SpecError(f"{where}: missing \"{key}\"")
        return default
    v = obj[key]
    if not _is_int(v) or v < minimum:
        raise SpecError(f"{where}: \"{key}\" must be an integer >= {minimum}, got {v!r}")
    return v


def norm_path(p, where, key="path"):
    if not isinstance(p, str) or not p:
        raise SpecError(f"{where}: \"{key}\" must be a non-empty string")
    if p.startswith("/"):
        raise SpecError(f"{where}: \"{key}\" must be relative, got {p!r}")
    if "\0" in p:
        raise SpecError(f"{where}: \"{key}\" contains a NUL byte")
    parts = [c for c in p.split("/") if c not in ("", ".")]
    if not parts:
        raise SpecError(f"{where}: \"{key}\" {p!r} names no file")
    if ".." in parts:
        raise SpecError(f"{where}: \"{key}\" {p!r} must not contain '..'")
    return "/".join(parts)


def parse_mode(obj, where):
    if "mode" not in obj:
        return None
    v = obj["mode"]
    if isinstance(v, str):
        try:
            v = int(v, 8)
        except ValueError:
            raise SpecError(f"{where}: \"mode\" {obj['mode']!r} is not an octal number") from None
    if not _is_int(v) or not 0 <= v <= 0o7777:
        raise SpecError(f"{where}: \"mode\" must be between 0 and 07777, got {obj['mode']!r}")
    return v


def _expand_generate(g, where):
    unknown = set(g) - GENERATE_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    if g["generate"] != "many":
        raise SpecError(f"{where}: unknown generator {g['generate']!r} (only \"many\")")
    base = norm_path(g.get("dir"), where, "dir")
    count = _int_field(g, "count", where)
    size_min = _int_field(g, "size_min", where)
    size_max = _int_field(g, "size_max", where)
    if size_max < size_min:
        raise SpecError(f"{where}: size_max ({size_max}) < size_min ({size_min})")
    seed = _int_field(g, "seed", where, default=0)
    start = _int_field(g, "start", where, default=1, minimum=1)
    step = _int_field(g, "step", where, default=1, minimum=1)
    fwidth = max(6, len(str(count)))
    dwidth = max(4, len(str(max(count - 1, 0) // FILES_PER_DIR)))
    rng = random.Random(seed)
    for i in range(start, count + 1, step):
        sub = f"d{(i - 1) // FILES_PER_DIR:0{dwidth}d}"
        yield Entry("file", f"{base}/{sub}/f{i:0{fwidth}d}.dat",
                    size=rng.randint(size_min, size_max), seed=seed)


def _expand_raw(entries, where):
    """Yield Entry objects for a layer's spec entries, without parents."""
    if not isinstance(entries, list):
        raise SpecError(f"{where}: \"entries\" must be a list")
    for n, e in enumerate(entries):
        ew = f"{where}.entries[{n}]"
        if not isinstance(e, dict):
            raise SpecError(f"{ew}: must be an object")
        if "generate" in e:
            yield from _expand_generate(e, ew)
            continue
        etype = e.get("type", "file")
        if etype not in ENTRY_KEYS:
            raise SpecError(f"{ew}: unknown type {etype!r}")
        unknown = set(e) - ENTRY_KEYS[etype]
        if unknown:
            raise SpecError(f"{ew}: unknown key(s) {', '.join(sorted(unknown))} for type {etype}")
        path = norm_path(e.get("path"), ew)
        ew = f"{ew} ({path})"
        mode = parse_mode(e, ew)
        if etype == "file":
            if ("size" in e) + ("content" in e) + ("from" in e) != 1:
                raise SpecError(f"{ew}: a file needs exactly one of \"size\", \"content\" or \"from\"")
            if "from" in e:
                if not isinstance(e["from"], str) or "seed" in e or "format" in e:
                    raise SpecError(f"{ew}: \"from\" is a file's path, alone")
                try:
                    with open(e["from"], "rb") as f:
                        data = f.read()
                except OSError as err:
                    raise SpecError(f"{ew}: cannot read {e['from']}: {err.strerror}")
                yield Entry("file", path, size=len(data), mode=mode, content=data)
            elif "content" in e:
                if not isinstance(e["content"], str):
                    raise SpecError(f"{ew}: \"content\" must be a string")
                if "seed" in e:
                    raise SpecError(f"{ew}: \"seed\" has no effect with \"content\"")
                data = e["content"].encode("utf-8")
                yield Entry("file", path, size=len(data), mode=mode, content=data)
            else:
                fmt = e.get("format")
                if fmt not in (None, "safetensors", "numpy"):
                    raise SpecError(f"{ew}: \"format\" is \"safetensors\", \"numpy\" or absent, not {fmt!r}")
                size = _int_field(e, "size", ew)
                if fmt == "safetensors" and size < SAFETENSORS_HEADER + 8 + 1:
                    raise SpecError(f"{ew}: a safetensors file needs more than {SAFETENSORS_HEADER + 8} bytes")
                if fmt == "numpy" and size < NUMPY_HEADER:
                    raise SpecError(f"{ew}: a numpy file needs at least {NUMPY_HEADER} bytes")
                yield Entry("file", path, size=size, mode=mode,
                            seed=_int_field(e, "seed", ew, default=0), format=fmt)
        elif etype == "dir":
            yield Entry("dir", path, mode=mode)
        elif etype == "symlink":
            target = e.get("target")
            if not isinstance(target, str) or not target:
                raise SpecError(f"{ew}: a symlink needs a non-empty string \"target\"")
            yield Entry("symlink", path, mode=mode, link=target)
        elif etype == "hardlink":
            yield Entry("hardlink", path, mode=mode, link=norm_path(e.get("target"), ew, "target"))
        else:  # whiteout
            base = path.rsplit("/", 1)[-1]
            if not base.startswith(WHITEOUT_PREFIX) or base == WHITEOUT_PREFIX:
                raise SpecError(f"{ew}: a whiteout's name must be .wh.<name> or {OPAQUE_WHITEOUT}")
            yield Entry("file", path, size=0, mode=mode, content=b"")


def expand_layer(layer_entries, where):
    """Yield the layer's tar entries in order, each parent directory first.

    Parents are emitted once per layer, the way docker writes layers.
    Duplicates and contradictions (a file used as a directory, a hardlink
    to something that is not an earlier regular file) are spec errors.
    """
    seen = {}  # path -> kind, for this layer only
    for e in _expand_raw(layer_entries, where):
        parts = e.path.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            kind = seen.get(parent)
            if kind is None:
                seen[parent] = "dir"
                yield Entry("dir", parent)
            elif kind != "dir":
                raise SpecError(f"{where}: {e.path!r} is inside {parent!r}, which is a {kind}")
        prev = seen.get(e.path)
        if prev is not None:
            if prev == "dir" and e.kind == "dir":
                continue  # already emitted, usually as an implied parent
            raise SpecError(f"{where}: {e.path!r} appears twice in the layer ({prev}, then {e.kind})")
        if e.kind == "hardlink" and seen.get(e.link) != "file":
            raise SpecError(f"{where}: hardlink {e.path!r} -> {e.link!r}: the target must be a "
                            f"regular file listed earlier in the same layer")
        seen[e.path] = e.kind
        yield e


def load_spec(path):
    try:
        with open(path, "rb") as f:
            spec = json.load(f)
    except OSError as exc:
        raise SpecError(f"cannot read spec: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise SpecError("spec: top level must be an object")
    unknown = set(spec) - {"tag", "layers", "env"}
    if unknown:
        raise SpecError(f"spec: unknown key(s) {', '.join(sorted(unknown))}")
    env = spec.get("env", [])
    if not isinstance(env, list) or not all(isinstance(e, str) and "=" in e for e in env):
        raise SpecError("spec: \"env\" must be a list of \"KEY=VALUE\" strings")
    tag = spec.get("tag")
    if not isinstance(tag, str) or not tag or any(c.isspace() for c in tag):
        raise SpecError("spec: \"tag\" must be a non-empty string like \"name:tag\"")
    layers = spec.get("layers")
    if not isinstance(layers, list):
        raise SpecError("spec: \"layers\" must be a list")
    for i, layer in enumerate(layers):
        where = f"layers[{i}]"
        if not isinstance(layer, dict):
            raise SpecError(f"{where}: must be an object")
        unknown = set(layer) - {"created_by", "entries", "empty_layer"}
        if unknown:
            raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        if not isinstance(layer.get("created_by", ""), str):
            raise SpecError(f"{where}: \"created_by\" must be a string")
        if not isinstance(layer.get("empty_layer", False), bool):
            raise SpecError(f"{where}: \"empty_layer\" must be true or false")
        if layer.get("empty_layer") and layer.get("entries"):
            raise SpecError(f"{where}: an empty_layer cannot have entries")
    return spec


def split_tag(ref):
    """"reg:5000/name:tag" -> ("reg:5000/name", "tag"); no tag -> "latest"."""
    name, sep, tag = ref.rpartition(":")
    if not sep or "/" in tag or not name:
        return ref, "latest"
    return name, tag


def layer_stats(spec):
    """Entry and byte counts per filesystem layer; also validates the spec."""
    stats = []
    for i, layer in enumerate(spec["layers"]):
        if layer.get("empty_layer"):
            continue
        entries = files = nbytes = 0
        for e in expand_layer(layer.get("entries", []), f"layers[{i}]"):
            entries += 1
            if e.kind == "file":
                files += 1
                nbytes += e.size
        stats.append({"entries": entries, "files": files, "bytes": nbytes})
    return stats


# ---------------------------------------------------------------------------
# Writing


class HashingWriter:
    """Write-through wrapper that sha256-hashes and counts what passes."""

    def __init__(self, f):
        self._f = f
        self._h = hashlib.sha256()
        self.size = 0

    def write(self, b):
        self._h.update(b)
        self.size += len(b)
        self._f.write(b)
        return len(b)

    def tell(self):
        return self.size

    def flush(self):
        self._f.flush()

    def digest(self):
        return "sha256:" + self._h.hexdigest()


def _tarinfo(name, kind, size=0, mode=None, link=""):
    ti = tarfile.TarInfo(name)
    ti.type = {"dir": tarfile.DIRTYPE, "file": tarfile.REGTYPE,
               "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE}[kind]
    ti.size = size if kind == "file" else 0
    ti.mode = DEFAULT_MODES[kind] if mode is None else mode
    ti.linkname = link
    ti.mtime = MTIME
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    return ti


def write_layer(layer, where, path, gzip_level):
    """Write one layer tar to `path`, gzip-compressed if gzip_level is set.

    Returns (diff_id, blob_digest, blob_size).  Both digests are computed
    while streaming, so the data is only produced and written once.
    """
    with open(path, "wb") as raw:
        blob = HashingWriter(raw)
        gz = None
        sink = blob
        if gzip_level is not None:
            # Empty filename and mtime 0 keep the gzip header reproducible.
            gz = gzip.GzipFile(filename="", mode="wb", compresslevel=gzip_level,
                               fileobj=blob, mtime=0)
            sink = gz
        diff = HashingWriter(sink)
        with tarfile.open(fileobj=diff, mode="w", format=tarfile.PAX_FORMAT,
                          copybufsize=COPY_BUF) as tf:
            for e in expand_layer(layer.get("entries", []), where):
                ti = _tarinfo(e.path, e.kind, e.size, e.mode, e.link)
                if e.kind != "file":
                    tf.addfile(ti)
                elif e.content is not None:
                    tf.addfile(ti, io.BytesIO(e.content))
                elif e.format in ("safetensors", "numpy"):
                    head = safetensors_header(e.size) if e.format == "safetensors" else numpy_header(e.size)
                    tf.addfile(ti, PrefixedReader(head, PatternReader(e.size - len(head), e.seed, e.path)))
                else:
                    tf.addfile(ti, PatternReader(e.size, e.seed, e.path))
        if gz is not None:
            gz.close()
    return diff.digest(), blob.digest(), blob.size


class OuterTar:
    def __init__(self, path):
        self.tf = tarfile.open(path, "w", format=tarfile.PAX_FORMAT, copybufsize=COPY_BUF)

    def add_dir(self, name):
        self.tf.addfile(_tarinfo(name, "dir"))

    def add_bytes(self, name, data):
        self.tf.addfile(_tarinfo(name, "file", len(data)), io.BytesIO(data))

    def add_file(self, name, path, size):
        with open(path, "rb") as f:
            self.tf.addfile(_tarinfo(name, "file", size), f)

    def close(self):
        self.tf.close()


def jdump(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def human(n):
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"


def build(spec, stats, out, fmt, gzip_level, quiet):
    out_dir = os.path.dirname(os.path.abspath(out))
    out_tmp = out + ".tmp"
    name, tag = split_tag(spec["tag"])
    layers = spec["layers"]
    n_fs = sum(1 for layer in layers if not layer.get("empty_layer"))
    diff_ids, history, descriptors, legacy_paths = [], [], [], []
    parent_v1 = ""
    written_blobs = set()
    layer_tmp = None
    outer = None
    ok = False
    try:
        outer = OuterTar(out_tmp)
        if fmt == "oci-archive":
            outer.add_bytes("oci-layout", jdump({"imageLayoutVersion": "1.0.0"}))
            outer.add_dir("blobs")
            outer.add_dir("blobs/sha256")
        fs_index = 0
        for i, layer in enumerate(layers):
            h = {"created": CREATED, "created_by": layer.get("created_by", "")}
            if layer.get("empty_layer"):
                h["empty_layer"] = True
                history.append(h)
                continue
            history.append(h)
            t0 = time.monotonic()
            fd, layer_tmp = tempfile.mkstemp(dir=out_dir, prefix=".make_image-layer-", suffix=".tmp")
            os.close(fd)
            diff_id, digest, size = write_layer(layer, f"layers[{i}]", layer_tmp, gzip_level)
            diff_ids.append(diff_id)
            if fmt == "docker-legacy":
                # Legacy v1 ids chain the parent id in, so two layers with
                # identical content still get distinct directories.
                v1id = hashlib.sha256(f"{parent_v1}\n{diff_id}\n{fs_index}".encode()).hexdigest()
                v1json = {"id": v1id}
                if parent_v1:
                    v1json["parent"] = parent_v1
                outer.add_dir(v1id)
                outer.add_bytes(f"{v1id}/VERSION", b"1.0")
                outer.add_bytes(f"{v1id}/json", jdump(v1json))
                outer.add_file(f"{v1id}/layer.tar", layer_tmp, size)
                legacy_paths.append(f"{v1id}/layer.tar")
                parent_v1 = v1id
            else:
                hexd = digest.split(":", 1)[1]
                if hexd not in written_blobs:  # identical layers share a blob
                    outer.add_file(f"blobs/sha256/{hexd}", layer_tmp, size)
                    written_blobs.add(hexd)
                descriptors.append({"mediaType": MT_OCI_LAYER_GZIP if gzip_level is not None
                                    else MT_OCI_LAYER, "digest": digest, "size": size})
            os.unlink(layer_tmp)
            layer_tmp = None
            st = stats[fs_index]
            fs_index += 1
            if not quiet:
                print(f"{PROG}: layers[{i}] ({fs_index}/{n_fs}): {st['entries']} entries, "
                      f"{human(st['bytes'])} in {st['files']} files, blob {human(size)} "
                      f"{digest[:19]} ({time.monotonic() - t0:.1f}s)", file=sys.stderr)

        config = jdump({
            "architecture": "amd64",
            "os": "linux",
            "created": CREATED,
            "config": {"Env": [ENV_PATH] + list(spec.get("env", []))},
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "history": history,
        })
        config_hex = hashlib.sha256(config).hexdigest()
        if fmt == "docker-legacy":
            outer.add_bytes(f"{config_hex}.json", config)
            # manifest.json and repositories come last, as in `docker save`
            # output from before the OCI layout; readers cannot rely on
            # having seen them before the layers.
            outer.add_bytes("manifest.json", jdump([{
                "Config": f"{config_hex}.json",
                "RepoTags": [f"{name}:{tag}"],
                "Layers": legacy_paths,
            }]))
            if parent_v1:
                outer.add_bytes("repositories", jdump({name: {tag: parent_v1}}))
        else:
            outer.add_bytes(f"blobs/sha256/{config_hex}", config)
            manifest = jdump({
                "schemaVersion": 2,
                "mediaType": MT_OCI_MANIFEST,
                "config": {"mediaType": MT_OCI_CONFIG, "digest": f"sha256:{config_hex}",
                           "size": len(config)},
                "layers": descriptors,
            })
            manifest_hex = hashlib.sha256(manifest).hexdigest()
            outer.add_bytes(f"blobs/sha256/{manifest_hex}", manifest)
            outer.add_bytes("index.json", jdump({
                "schemaVersion": 2,
                "mediaType": MT_OCI_INDEX,
                "manifests": [{
                    "mediaType": MT_OCI_MANIFEST,
                    "digest": f"sha256:{manifest_hex}",
                    "size": len(manifest),
                    "annotations": {
                        "io.containerd.image.name": f"{name}:{tag}",
                        "org.opencontainers.image.ref.name": tag,
                    },
                }],
            }))
        outer.close()
        outer = None
        os.replace(out_tmp, out)
        ok = True
    finally:
        if outer is not None:
            try:
                outer.close()
            except Exception:  # already failing; keep the original error
                pass
        if layer_tmp is not None:
            _unlink_quietly(layer_tmp)
        if not ok:
            _unlink_quietly(out_tmp)
    if not quiet:
        print(f"{PROG}: wrote {out} ({human(os.path.getsize(out))})", file=sys.stderr)


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# ---------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Generate a deterministic container image archive from a JSON layer spec.",
        epilog="See the module docstring at the top of this file for the spec format.")
    p.add_argument("spec", help="JSON layer spec")
    p.add_argument("out", nargs="?", help="output archive (written via OUT.tmp)")
    p.add_argument("--format", choices=["docker-legacy", "oci-archive"],
                   help="archive layout (required unless --print-expected)")
    p.add_argument("--layer-compression", choices=["none", "gzip"], default="none",
                   help="layer blob compression (oci-archive only; default none)")
    p.add_argument("--gzip-level", type=int, default=6, metavar="N",
                   help="gzip level 1-9 for --layer-compression gzip (default 6)")
    p.add_argument("--print-expected", action="store_true",
                   help="print expected figures computed from the spec as JSON and exit: "
                        "layers_bytes (sum of regular file sizes over all layers), "
                        "entries_per_layer (tar entries, implied parent dirs included), "
                        "bytes_per_layer, files_per_layer; empty_layer entries are skipped")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    args = p.parse_args(argv)
    if not args.print_expected:
        if args.out is None:
            p.error("OUT is required unless --print-expected is given")
        if args.format is None:
            p.error("--format is required unless --print-expected is given")
        if args.format == "docker-legacy" and args.layer_compression == "gzip":
            p.error("docker-legacy archives always hold uncompressed layer.tar files; "
                    "--layer-compression gzip needs --format oci-archive")
    if not 1 <= args.gzip_level <= 9:
        p.error("--gzip-level must be between 1 and 9")
    return args


def _on_sigterm(signum, frame):
    # Turn SIGTERM into SystemExit so the cleanup in build() still runs.
    sys.exit(128 + signum)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        spec = load_spec(args.spec)
        # Expanding the whole spec up front validates it before any
        # (possibly multi-GB) output is written.
        stats = layer_stats(spec)
        if args.print_expected:
            json.dump({
                "layers_bytes": sum(s["bytes"] for s in stats),
                "entries_per_layer": [s["entries"] for s in stats],
                "bytes_per_layer": [s["bytes"] for s in stats],
                "files_per_layer": [s["files"] for s in stats],
            }, sys.stdout)
            sys.stdout.write("\n")
            return 0
        level = args.gzip_level if args.layer_compression == "gzip" else None
        build(spec, stats, args.out, args.format, level, args.quiet)
    except SpecError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
