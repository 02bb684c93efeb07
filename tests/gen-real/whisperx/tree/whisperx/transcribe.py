import argparse
import os

import numpy as np
import torch

from whisperx.alignment import align
from whisperx.asr import load_model
from whisperx.audio import load_audio
from whisperx.diarize import DiarizationPipeline


def transcribe_task(args: dict, parser: argparse.ArgumentParser):
    os.makedirs(args["output_dir"], exist_ok=True)
