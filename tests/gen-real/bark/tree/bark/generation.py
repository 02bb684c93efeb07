import os

import torch
from huggingface_hub import hf_hub_download

SAMPLE_RATE = 24_000
default_cache_dir = os.path.join(os.path.expanduser("~"), ".cache")
CACHE_DIR = os.path.join(os.getenv("XDG_CACHE_HOME", default_cache_dir), "suno", "bark_v0")
