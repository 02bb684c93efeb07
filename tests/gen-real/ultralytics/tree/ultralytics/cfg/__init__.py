import shutil
import subprocess
import sys
from pathlib import Path


def entrypoint(debug=""):
    args = (debug.split(" ") if debug else sys.argv)[1:]


if __name__ == "__main__":
    entrypoint(debug="")
