#!/usr/bin/python3
"""gen's tables as the Debian stand-ins make them true.

Usage: standin_gen_tables.py SOURCE_CUDA_IMAGES_JSON OUT_DIR

The stand-ins of NVIDIA's and Docker's Python images are Debian bookworm
inside, so wherever gen would install Ubuntu's Python and packages, Debian's
3.11 and its package versions are written instead; gen reads the result
through IMGSMITH_GEN_TABLES=OUT_DIR.
"""
import json
import os
import sys

source, out_dir = sys.argv[1:3]
tables = json.load(open(source))
debian = {"python": "3.11", "python_runtime": ["python3.11=3.11.*"],
          "python_build": ["python3.11=3.11.*", "python3.11-venv=3.11.*"],
          "runtime_compiler": ["gcc=4:12.*", "python3.11-dev=3.11.*"],
          "cmake_build": ["cmake=3.25.*", "make=4.3-*", "g++=4:12.*"]}
for name in tables["os"]:
    tables["os"][name] = debian
tables["python"]["preferred"] = "3.11"
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, "cuda-images.json"), "w") as f:
    json.dump(tables, f)
