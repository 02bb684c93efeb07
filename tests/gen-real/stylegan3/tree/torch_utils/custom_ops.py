# Compiles the CUDA plugins in torch_utils/ops at first use with
# torch.utils.cpp_extension.load() (needs nvcc and ninja at run time);
# the build directory is $TORCH_EXTENSIONS_DIR or $HOME/.cache/torch_extensions.
import glob
import hashlib
import importlib
import os
import re
import shutil
import uuid

import torch
import torch.utils.cpp_extension
