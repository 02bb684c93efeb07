import os
import sys

import cv2
import numpy as np
import requests
from tqdm import tqdm

from tools.infer import predict_system
from ppocr.utils.utility import get_image_file_list

VERSION = "2.7.0"
BASE_DIR = os.path.expanduser("~/.paddleocr/")


class PaddleOCR(predict_system.TextSystem):
    # downloads the det/rec/cls inference models into ~/.paddleocr/ at first use
    pass


def main():
    # command line: paddleocr --image_dir ... (parse_args in tools/infer/utility.py, use_gpu defaults to True)
    pass
