"""setup.py for axolotl"""
from setuptools import find_packages, setup


def parse_requirements():
    # lines of requirements.txt, less the deepspeed/mamba-ssm lines (extras) and
    # the --extra-index-url line (dependency_links); appends torch==<installed>
    # (default 2.5.1) and an xformers pin chosen from the torch version.
    install_requires, dependency_links = [], []
    return install_requires, dependency_links


extras_require = {
    "flash-attn": ["flash-attn==2.7.4.post1"],
    "deepspeed": ["deepspeed==0.15.4", "deepspeed-kernels"],
    "mamba-ssm": ["mamba-ssm==1.2.0.post1", "causal_conv1d"],
    "auto-gptq": ["auto-gptq==0.5.1"],
    "mlflow": ["mlflow"],
    "galore": ["galore_torch"],
    "optimizers": ["galore_torch", "apollo-torch", "lomo-optim==0.1.1", "torch-optimi==0.2.1"],
    "ray": ["ray[train]"],
    "vllm": ["vllm==0.7.2"],
}

install_requires, dependency_links = parse_requirements()

setup(
    package_dir={"": "src"},
    packages=find_packages("src"),
    install_requires=install_requires,
    dependency_links=dependency_links,
    entry_points={
        "console_scripts": [
            "axolotl=axolotl.cli.main:main",
        ],
    },
    extras_require=extras_require,
)
