import argparse
import os

import numpy as np
import torch
from PIL import Image

import GroundingDINO.groundingdino.datasets.transforms as T
from GroundingDINO.groundingdino.models import build_model
from segment_anything import sam_model_registry, sam_hq_model_registry, SamPredictor
import cv2
import matplotlib.pyplot as plt

if __name__ == "__main__":
    parser = argparse.ArgumentParser("Grounded-Segment-Anything Demo", add_help=True)
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--grounded_checkpoint", type=str, required=True)
    parser.add_argument("--sam_checkpoint", type=str, required=False)
    parser.add_argument("--input_image", type=str, required=True)
    parser.add_argument("--text_prompt", type=str, required=True)
    parser.add_argument("--output_dir", "-o", type=str, default="outputs", required=True)
    parser.add_argument("--device", type=str, default="cpu")
    args = parser.parse_args()
