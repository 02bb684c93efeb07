import numpy as np
import cv2, os, sys, torch
from tqdm import tqdm
from PIL import Image
import safetensors
import safetensors.torch
from src.utils.croper import Preprocesser


class CropAndExtract():
    def __init__(self, sadtalker_path, device):
        self.device = device
