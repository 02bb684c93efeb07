import argparse
import glob
import multiprocessing as mp
import numpy as np
import os
import tempfile
import time
import warnings
import cv2
import tqdm

from detectron2.config import get_cfg
from detectron2.data.detection_utils import read_image
from detectron2.utils.logger import setup_logger

from predictor import VisualizationDemo


def get_parser():
    parser = argparse.ArgumentParser(description="Detectron2 demo for builtin configs")
    parser.add_argument("--config-file", default="configs/quick_schedules/mask_rcnn_R_50_FPN_inference_acc_test.yaml", metavar="FILE")
    parser.add_argument("--webcam", action="store_true")
    parser.add_argument("--input", nargs="+")
    parser.add_argument("--output")
    parser.add_argument("--opts", default=[], nargs=argparse.REMAINDER)
    return parser


if __name__ == "__main__":
    pass
