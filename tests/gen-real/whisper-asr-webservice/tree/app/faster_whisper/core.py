import os
import torch
from faster_whisper import WhisperModel

model_name = os.getenv("ASR_MODEL", "base")
model_path = os.getenv("ASR_MODEL_PATH", os.path.join(os.path.expanduser("~"), ".cache", "whisper"))
device = "cuda" if torch.cuda.is_available() else "cpu"
