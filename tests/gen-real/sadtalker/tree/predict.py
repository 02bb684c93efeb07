import os
import shutil
from argparse import Namespace
from src.utils.preprocess import CropAndExtract
from src.facerender.animate import AnimateFromCoeff
from cog import BasePredictor, Input, Path

checkpoints = "checkpoints"


class Predictor(BasePredictor):
    def setup(self):
        device = "cuda"

    def predict(
        self,
        source_image: Path = Input(description="source image"),
        driven_audio: Path = Input(description="driven audio"),
        enhancer: str = Input(choices=["gfpgan", "RestoreFormer"], default="gfpgan"),
        preprocess: str = Input(choices=["crop", "resize", "full"], default="full"),
        still: bool = Input(default=True),
    ) -> Path:
        results_dir = "results"
        os.makedirs(results_dir, exist_ok=True)
        output = "/tmp/out.mp4"
        return Path(output)
