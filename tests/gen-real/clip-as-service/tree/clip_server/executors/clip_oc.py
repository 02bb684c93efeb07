import os
import torch
from jina import Executor, requests, DocumentArray
