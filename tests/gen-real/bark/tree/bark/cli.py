import argparse
import os

from scipy.io.wavfile import write as write_wav

from .api import generate_audio
from .generation import SAMPLE_RATE


def cli():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", type=str)
    parser.add_argument("--output_filename", type=str, default="bark_generation.wav")
    parser.add_argument("--output_dir", type=str, default=".")
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
