from setuptools import find_packages, setup

extra_require = {
    "torch": ["torch>=2.0.0", "torchvision>=0.15.0"],
    "metrics": ["nltk", "jieba", "rouge-chinese"],
    "deepspeed": ["deepspeed>=0.10.0,<=0.16.5"],
    "liger-kernel": ["liger-kernel>=0.5.5"],
    "bitsandbytes": ["bitsandbytes>=0.39.0"],
    "vllm": ["vllm>=0.4.3,<=0.8.6"],
    "dev": ["pre-commit", "ruff", "pytest", "build"],
}

setup(
    name="llamafactory",
    package_dir={"": "src"},
    packages=find_packages("src"),
    python_requires=">=3.9.0",
    install_requires=open("requirements.txt").read().splitlines(),  # get_requires(): lines of requirements.txt
    extras_require=extra_require,
    entry_points={"console_scripts": ["llamafactory-cli = llamafactory.cli:main", "lmf = llamafactory.cli:main"]},
)
