import logging
import re
import subprocess
import os
import shutil
import sys
import importlib.util
import importlib.metadata
import platform
import json

from modules import cmd_args, errors
from modules.paths_internal import script_path, extensions_dir

dir_repos = "repositories"


def prepare_environment():
    torch_index_url = os.environ.get('TORCH_INDEX_URL', "https://download.pytorch.org/whl/cu118")
    torch_command = os.environ.get('TORCH_COMMAND', f"pip install torch==2.0.1 torchvision==0.15.2 --extra-index-url {torch_index_url}")
    requirements_file = os.environ.get('REQS_FILE', "requirements_versions.txt")
    xformers_package = os.environ.get('XFORMERS_PACKAGE', 'xformers==0.0.20')
    os.makedirs(os.path.join(script_path, dir_repos), exist_ok=True)


def start():
    import webui
    if '--nowebui' in sys.argv:
        webui.api_only()
    else:
        webui.webui()
