"""A simple command-line interactive chat demo."""
import argparse

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import GenerationConfig
from transformers.trainer_utils import set_seed

DEFAULT_CKPT_PATH = 'Qwen/Qwen-7B-Chat'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint-path", type=str, default=DEFAULT_CKPT_PATH)
    parser.add_argument("-s", "--seed", type=int, default=1234)
    parser.add_argument("--cpu-only", action="store_true")
    args = parser.parse_args()


if __name__ == "__main__":
    main()
