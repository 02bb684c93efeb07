import argparse
import os
import subprocess
import sys

TORCH_VERSION = "2.9.1"
PYTHON_VERSION = "3.13"

# NVIDIA: python -m pip install torch==2.9.1 --index-url https://download.pytorch.org/whl/cu128
# requirements file for NVIDIA: requirements/full/requirements.txt

if __name__ == "__main__":
    pass
