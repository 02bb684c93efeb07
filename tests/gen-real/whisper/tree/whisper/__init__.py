import hashlib
import io
import os
import urllib
import warnings

import torch
from tqdm import tqdm

from .audio import load_audio, log_mel_spectrogram, pad_or_trim
from .model import ModelDimensions, Whisper
from .transcribe import transcribe
from .version import __version__
