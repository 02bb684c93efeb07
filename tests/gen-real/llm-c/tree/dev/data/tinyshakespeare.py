"""Downloads and tokenizes the TinyShakespeare dataset (GPT-2 tokenizer, tiktoken)."""
import argparse
import os

import tiktoken
from transformers import AutoTokenizer

from data_common import download_file, write_datafile

DATA_CACHE_DIR = os.path.join(os.path.dirname(__file__), "tinyshakespeare")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Tiny Shakespeare dataset preprocessing")
    parser.add_argument("-m", "--model_desc", type=str, default="gpt-2", choices=["gpt-2", "llama-3"])
    args = parser.parse_args()
