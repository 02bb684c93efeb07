import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

cwd = os.path.dirname(os.path.abspath(__file__))
requirements = open(os.path.join(cwd, "requirements.txt"), "r").readlines()

exts = [Extension(name="TTS.tts.utils.monotonic_align.core", sources=["TTS/tts/utils/monotonic_align/core.pyx"])]

setup(
    name="TTS",
    include_dirs=numpy.get_include(),
    ext_modules=cythonize(exts, language_level=3),
    packages=find_packages(include=["TTS"], exclude=["*.tests", "*tests.*", "tests.*", "*tests", "tests"]),
    install_requires=requirements,
    python_requires=">=3.9.0, <3.12",
    entry_points={
        "console_scripts": [
            "tts=TTS.bin.synthesize:main",
            "tts-server = TTS.server.server:main",
        ]
    },
)
