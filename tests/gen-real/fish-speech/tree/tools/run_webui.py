import os
from argparse import ArgumentParser
from pathlib import Path

import pyrootutils
import torch
from loguru import logger

pyrootutils.setup_root(__file__, indicator=".project-root", pythonpath=True)

from fish_speech.inference_engine import TTSInferenceEngine
from tools.webui import build_app


def parse_args():
    parser = ArgumentParser()
    parser.add_argument("--llama-checkpoint-path", type=Path, default="checkpoints/fish-speech-1.5")
    parser.add_argument("--decoder-checkpoint-path", type=Path, default="checkpoints/fish-speech-1.5/firefly-gan-vq-fsq-8x1024-21hz-generator.pth")
    parser.add_argument("--decoder-config-name", type=str, default="firefly_gan_vq")
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--half", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--theme", type=str, default="light")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    if not torch.cuda.is_available():
        args.device = "cpu"
    app = build_app(None, args.theme)
    app.launch(show_api=True)
