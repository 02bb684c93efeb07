#!/usr/bin/env bash
# Writes a legacy `docker save` of one layer tar (a root filesystem) as an
# image with one history entry. The layer is hard-linked where it can be:
# test roots are hundreds of MB.
# Usage: one_layer_image.sh LAYER_TAR OUT_TAR TAG CREATED_BY
set -euo pipefail
layer=$1 out=$2 tag=$3 created_by=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/layer"
ln "$layer" "$dir/layer/layer.tar" 2>/dev/null || cp "$layer" "$dir/layer/layer.tar"
diff_id="sha256:$(sha256sum "$layer" | cut -d' ' -f1)"
python3 - "$dir" "$diff_id" "$tag" "$created_by" <<'PY'
import json, sys
d, diff_id, tag, created_by = sys.argv[1:]
json.dump({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [diff_id]},
           "history": [{"created_by": created_by}]}, open(f"{d}/config.json", "w"))
json.dump([{"Config": "config.json", "RepoTags": [tag], "Layers": ["layer/layer.tar"]}],
          open(f"{d}/manifest.json", "w"))
PY
tar -C "$dir" -cf "$out" layer config.json manifest.json
