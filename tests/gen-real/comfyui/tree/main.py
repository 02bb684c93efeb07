import comfy.options
comfy.options.enable_args_parsing()

import os
import importlib.util
import folder_paths
import time
from comfy.cli_args import args

import execution
import server
import nodes
import comfy.model_management

if __name__ == "__main__":
    pass
