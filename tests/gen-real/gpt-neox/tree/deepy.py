#!/usr/bin/env python
import logging
import os

import deepspeed
from deepspeed.launcher.runner import main

from megatron.neox_arguments import NeoXArgs

logging.basicConfig(level=os.environ.get("LOGLEVEL", "INFO"))


def main_():
    pass  # NeoXArgs.consume_deepy_args(), then deepspeed's launcher runs the given script on every GPU


if __name__ == "__main__":
    main_()
