import argparse
import os

import gradio as gr
import numpy as np
import torch
from diffusers import StableDiffusionInpaintPipeline
from PIL import Image

from segment_anything import build_sam, SamPredictor, SamAutomaticMaskGenerator

if __name__ == "__main__":
    parser = argparse.ArgumentParser("Grounded SAM demo", add_help=True)
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--share", action="store_true")
    parser.add_argument("--port", type=int, default=7589)
    parser.add_argument("--no-gradio-queue", action="store_true")
    args = parser.parse_args()

    block = gr.Blocks()
    block.launch(server_name="0.0.0.0", server_port=args.port, debug=args.debug, share=args.share)
