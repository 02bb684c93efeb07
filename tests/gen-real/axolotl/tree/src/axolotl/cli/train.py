"""CLI to run training on a model."""
from pathlib import Path

import fire
import torch
from accelerate import Accelerator
from transformers.hf_argparser import HfArgumentParser


def do_cli(config=Path("examples/"), **kwargs):
    pass


if __name__ == "__main__":
    fire.Fire(do_cli)
