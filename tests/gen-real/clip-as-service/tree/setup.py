import sys
from setuptools import find_packages, setup

setup(
    name='clip-server',
    packages=find_packages(),
    include_package_data=True,
    setup_requires=['setuptools>=18.0', 'wheel'],
    install_requires=[
        'ftfy',
        'torch',
        'regex',
        'torchvision<=0.13.0' if sys.version_info <= (3, 7, 2) else 'torchvision',
        'jina>=3.12.0',
        'prometheus-client',
        'open_clip_torch>=2.8.0',
    ],
    extras_require={
        'onnx': ['onnx', 'onnxmltools'] + (['onnxruntime-gpu>=1.8.0'] if sys.platform != 'darwin' else ['onnxruntime']),
        'tensorrt': ['nvidia-tensorrt'],
        'transformers': ['transformers>=4.16.2'],
        'search': ['annlite>=0.3.10'],
        'flash-attn': ['flash-attn'],
        'cn_clip': ['cn_clip'],
    },
)
