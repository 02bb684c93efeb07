import pickle
import os
import re
from g2p_en import G2p
from transformers import AutoTokenizer
