import os, sys, time
import shutil
from argparse import ArgumentParser

import torch

from src.utils.preprocess import CropAndExtract
from src.facerender.animate import AnimateFromCoeff


def main(args):
    os.makedirs(args.result_dir, exist_ok=True)


if __name__ == '__main__':
    parser = ArgumentParser()
    parser.add_argument("--driven_audio", default='./examples/driven_audio/bus_chinese.wav')
    parser.add_argument("--source_image", default='./examples/source_image/full_body_1.png')
    parser.add_argument("--checkpoint_dir", default='./checkpoints')
    parser.add_argument("--result_dir", default='./results')
    parser.add_argument('--enhancer', type=str, default=None)
    parser.add_argument("--cpu", dest="cpu", action="store_true")
    parser.add_argument("--still", action="store_true")
    parser.add_argument("--preprocess", default='crop', choices=['crop', 'extcrop', 'resize', 'full', 'extfull'])
    args = parser.parse_args()
    if torch.cuda.is_available() and not args.cpu:
        args.device = "cuda"
    else:
        args.device = "cpu"
    main(args)
