import glob
import os
from setuptools import find_packages, setup
import torch
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

# get_extensions(): detectron2._C from detectron2/layers/csrc/**/*.cpp and *.cu;
# CUDAExtension when torch.cuda.is_available() or FORCE_CUDA == "1"

setup(
    name="detectron2",
    packages=find_packages(exclude=("configs", "tests*")),
    python_requires=">=3.7",
    install_requires=[
        "Pillow>=7.1",
        "matplotlib",
        "pycocotools>=2.0.2",
        "termcolor>=1.1",
        "yacs>=0.1.8",
        "tabulate",
        "cloudpickle",
        "tqdm>4.29.0",
        "tensorboard",
        "fvcore>=0.1.5,<0.1.6",
        "iopath>=0.1.7,<0.1.10",
        "future",
        "pydot",
        "dataclasses; python_version<'3.7'",
        "omegaconf>=2.1",
        "hydra-core>=1.1",
        "black==22.3.0",
        "timm",
        "fairscale",
        "packaging",
    ],
    extras_require={
        "all": [
            "scipy>1.5.1",
            "shapely",
            "pygments>=2.2",
            "psutil",
            "panopticapi @ https://github.com/cocodataset/panopticapi/archive/master.zip",
        ],
    },
    ext_modules=get_extensions(),
    cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension},
)
