import numpy as np
from ftfy import fix_text
from PIL import Image
from tokenizers import Encoding, Tokenizer

from .base import InferenceModel
