import os
import re
import json
import torch
import librosa
import soundfile
import torchaudio
import numpy as np
import torch.nn as nn
from tqdm import tqdm

from .download_utils import load_or_download_config, load_or_download_model


class TTS(nn.Module):
    def __init__(self, language, device='auto', use_hf=True, config_path=None, ckpt_path=None):
        super().__init__()
        if device == 'auto':
            device = 'cpu'
            if torch.cuda.is_available(): device = 'cuda'
