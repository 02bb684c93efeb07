import glob
import os
import subprocess

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

# get_extensions(): groundingdino._C from groundingdino/models/GroundingDINO/csrc (*.cpp, *.cu);
# CUDAExtension if (torch.cuda.is_available() and CUDA_HOME is not None)
# or (AM_I_DOCKER and BUILD_WITH_CUDA are true in the environment); otherwise no extension.

if __name__ == "__main__":
    setup(
        name="groundingdino",
        version="0.1.0",
        install_requires=parse_requirements("requirements.txt"),
        packages=find_packages(exclude=("configs", "tests")),
        ext_modules=get_extensions(),
        cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
    )
