import logging
import os
import random

import cv2
import numpy as np
import paddle


def get_image_file_list(img_file):
    pass


def set_seed(seed=1024):
    pass
