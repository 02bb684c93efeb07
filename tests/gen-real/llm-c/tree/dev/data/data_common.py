import requests
from tqdm import tqdm
import numpy as np


def download_file(url: str, fname: str, chunk_size=1024):
    pass


def write_datafile(filename, toks, model_desc="gpt-2"):
    pass
