import os
import subprocess
from typing import Optional

from PIL import Image
import requests
import torch
from transformers.generation.streamers import TextIteratorStreamer
from cog import BasePredictor, Input, Path, ConcatenateIterator

from llava.model.builder import load_pretrained_model
from file_utils import is_url, download_weights, download_json, DEFAULT_WEIGHTS

os.environ["HUGGINGFACE_HUB_CACHE"] = os.getcwd() + "/models"


class Predictor(BasePredictor):
    def setup(self, weights: Optional[Path] = None) -> None:
        pass  # downloads weights with pget, loads liuhaotian/llava-v1.5-13b

    def predict(self, image: Path = Input(description="Input image"), prompt: str = Input(description="Prompt")) -> ConcatenateIterator[str]:
        pass
