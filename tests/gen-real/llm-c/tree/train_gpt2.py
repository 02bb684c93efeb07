"""
Reference code for GPT-2 training and inference.
Will save the model weights into files, to be read from C as initialization.
"""
import os
import math
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
import torch._inductor.config as config
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed import init_process_group, destroy_process_group

if __name__ == "__main__":
    import tiktoken
    parser = argparse.ArgumentParser()
    parser.add_argument("--input_bin", type=str, default="dev/data/tinyshakespeare/tiny_shakespeare_val.bin")
    parser.add_argument("--output_dir", type=str, default="")
    parser.add_argument("--model", type=str, default="gpt2")
    parser.add_argument("--write_tensors", type=int, default=1)
    args = parser.parse_args()
    # writes gpt2_124M.bin, gpt2_124M_bf16.bin, gpt2_124M_debug_state.bin, gpt2_tokenizer.bin into the cwd
