from setuptools import setup
from io import open
import subprocess

# VERSION is read from paddleocr.py


def load_requirements(file_list=None):
    requirements = []
    for file in file_list:
        with open(file, encoding="utf-8-sig") as f:
            requirements.extend(f.readlines())
    return requirements


setup(
    name="paddleocr",
    packages=["paddleocr"],
    package_dir={"paddleocr": ""},
    include_package_data=True,
    entry_points={"console_scripts": ["paddleocr= paddleocr.paddleocr:main"]},
    version="2.7.0",
    install_requires=load_requirements(["requirements.txt", "ppstructure/recovery/requirements.txt"]),
    license="Apache License 2.0",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.7",
    ],
)
