import os
import time
import torch
from hyperpyyaml import load_hyperpyyaml
from modelscope import snapshot_download
from cosyvoice.cli.frontend import CosyVoiceFrontEnd


class CosyVoice:
    def __init__(self, model_dir, load_jit=False, load_trt=False, fp16=False):
        if not os.path.exists(model_dir):
            model_dir = snapshot_download(model_dir)


class CosyVoice2(CosyVoice):
    pass
