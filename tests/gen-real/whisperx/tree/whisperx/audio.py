import os
import subprocess

import numpy as np
import torch
import torch.nn.functional as F


def load_audio(file: str, sr: int = 16000):
    cmd = ["ffmpeg", "-nostdin", "-threads", "0", "-i", file, "-f", "s16le", "-ac", "1", "-acodec", "pcm_s16le", "-ar", str(sr), "-"]
    out = subprocess.run(cmd, capture_output=True, check=True).stdout
