import torch
import numpy as np
from loguru import logger


class TTSInferenceEngine:
    def __init__(self, llama_queue, decoder_model, precision, compile):
        self.precision = precision
