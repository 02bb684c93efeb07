import itertools
import os
import zlib

import ctranslate2
import numpy as np
import tokenizers
from faster_whisper.audio import decode_audio
from faster_whisper.tokenizer import Tokenizer


class WhisperModel:
    def __init__(self, model_size_or_path, device="auto", compute_type="default"):
        self.model = ctranslate2.models.Whisper(model_size_or_path, device=device, compute_type=compute_type)
