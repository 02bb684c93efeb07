import json
import os.path as osp
from typing import Union
