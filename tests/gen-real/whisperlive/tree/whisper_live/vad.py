import os
import subprocess
import torch
import numpy as np
import onnxruntime


class VoiceActivityDetector:
    def __init__(self, threshold=0.5, frame_rate=16000):
        self.session = onnxruntime.InferenceSession(os.path.expanduser("~/.cache/whisper-live/silero_vad.onnx"))
