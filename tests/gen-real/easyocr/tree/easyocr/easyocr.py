import os
import sys
from pathlib import Path

import numpy as np
import torch
import cv2

MODULE_PATH = os.environ.get("EASYOCR_MODULE_PATH") or os.environ.get("MODULE_PATH") or os.path.expanduser("~/.EasyOCR/")


class Reader(object):
    def __init__(self, lang_list, gpu=True, model_storage_directory=None, download_enabled=True):
        pass
