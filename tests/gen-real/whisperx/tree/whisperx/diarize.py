import numpy as np
import pandas as pd
import torch
from pyannote.audio import Pipeline
