import argparse

import requests
import torch
from PIL import Image
from transformers import TextStreamer

from llava.model.builder import load_pretrained_model

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", type=str, default="facebook/opt-350m")
    parser.add_argument("--image-file", type=str, required=True)
    parser.add_argument("--device", type=str, default="cuda")
    args = parser.parse_args()
