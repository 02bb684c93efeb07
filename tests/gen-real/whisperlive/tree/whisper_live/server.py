import os
import time
import threading
import json
import functools
import logging

import numpy as np
import torch
from websockets.sync.server import serve
from websockets.exceptions import ConnectionClosed

from whisper_live.vad import VoiceActivityDetector
from whisper_live.transcriber import WhisperModel


class TranscriptionServer:
    RATE = 16000

    def run(self, host, port=9090, backend="tensorrt", faster_whisper_custom_model_path=None,
            whisper_tensorrt_path=None, trt_multilingual=False, single_model=False):
        with serve(functools.partial(self.recv_audio, backend=backend), host, port) as server:
            server.serve_forever()
