import os
import cv2
import yaml
import numpy as np
import warnings
from skimage import img_as_ubyte
import safetensors
import safetensors.torch
import imageio
import torch
import torchvision
from pydub import AudioSegment


class AnimateFromCoeff():
    def __init__(self, sadtalker_path, device):
        self.device = device
