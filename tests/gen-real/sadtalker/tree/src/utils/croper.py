import os
import cv2
import numpy as np
from PIL import Image
from facexlib.alignment import landmark_98_to_68
from facexlib.detection import init_detection_model


class Preprocesser:
    def __init__(self, device='cuda'):
        self.device = device
