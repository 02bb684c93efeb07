import argparse
import cv2
import glob
import numpy as np
import os
import torch
from basicsr.utils import imwrite

from gfpgan import GFPGANer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--upscale', type=int, default=2)
    parser.add_argument('--model_path', type=str, default='experiments/pretrained_models/GFPGANCleanv1-NoCE-C2.pth')
    parser.add_argument('--bg_upsampler', type=str, default='realesrgan')
    parser.add_argument('--test_path', type=str, default='inputs/whole_imgs')
    parser.add_argument('--save_root', type=str, default='results')
    args = parser.parse_args()
    os.makedirs(args.save_root, exist_ok=True)
    if args.bg_upsampler == 'realesrgan':
        from realesrgan import RealESRGANer


if __name__ == '__main__':
    main()
