import argparse
import os

import numpy as np
import torch
import tqdm


def cli():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("audio", nargs="+", type=str)
    parser.add_argument("--model", default="turbo", type=str)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--output_dir", "-o", type=str, default=".")
    args = parser.parse_args().__dict__
    os.makedirs(args["output_dir"], exist_ok=True)


if __name__ == "__main__":
    cli()
