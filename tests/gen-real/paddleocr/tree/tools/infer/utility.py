import argparse
import os

import cv2
import numpy as np
import paddle
from paddle import inference
from PIL import Image, ImageDraw, ImageFont


def str2bool(v):
    return v.lower() in ("true", "yes", "t", "y", "1")


def init_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_gpu", type=str2bool, default=True)
    parser.add_argument("--image_dir", type=str)
    parser.add_argument("--det_model_dir", type=str)
    parser.add_argument("--rec_model_dir", type=str)
    return parser


def parse_args():
    return init_args().parse_args()
