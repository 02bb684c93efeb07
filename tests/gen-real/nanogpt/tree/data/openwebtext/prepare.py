import os
from tqdm import tqdm
import numpy as np
import tiktoken
from datasets import load_dataset
