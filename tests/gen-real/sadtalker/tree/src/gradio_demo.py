import torch, uuid
import os, sys, shutil
from src.utils.preprocess import CropAndExtract
from src.facerender.animate import AnimateFromCoeff
from pydub import AudioSegment


class SadTalker():
    def __init__(self, checkpoint_path='checkpoints', config_path='src/config', lazy_load=False):
        if torch.cuda.is_available():
            self.device = "cuda"
        else:
            self.device = "cpu"
