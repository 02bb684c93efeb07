import os
import pickle
from contextlib import nullcontext
import torch
import tiktoken
from model import GPTConfig, GPT

init_from = 'resume'
out_dir = 'out'
exec(open('configurator.py').read())
