import os
import sys

import yaml
import paddle
import paddle.distributed as dist

from ppocr.utils.utility import set_seed

if __name__ == "__main__":
    # python tools/train.py -c configs/... (writes ./output/)
    pass
