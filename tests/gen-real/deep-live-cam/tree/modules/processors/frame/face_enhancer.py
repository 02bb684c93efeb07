import gfpgan
import torch

NAME = 'DLC.FACE-ENHANCER'
