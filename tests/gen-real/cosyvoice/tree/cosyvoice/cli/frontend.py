import onnxruntime
import torch
import numpy as np
import whisper
import torchaudio.compliance.kaldi as kaldi
import inflect
from wetext import Normalizer as ZhNormalizer


class CosyVoiceFrontEnd:
    def __init__(self, get_tokenizer, feat_extractor, campplus_model, speech_tokenizer_model, spk2info='', allowed_special='all'):
        option = onnxruntime.SessionOptions()
        self.speech_tokenizer_session = onnxruntime.InferenceSession(speech_tokenizer_model, sess_options=option, providers=["CUDAExecutionProvider" if torch.cuda.is_available() else "CPUExecutionProvider"])
