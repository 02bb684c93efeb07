import os
from setuptools import find_packages, setup

base_dir = os.path.dirname(os.path.abspath(__file__))


def get_requirements(path):
    with open(path, encoding="utf-8") as requirements:
        return [requirement.strip() for requirement in requirements]


setup(
    name="faster-whisper",
    python_requires=">=3.8",
    install_requires=get_requirements(os.path.join(base_dir, "requirements.txt")),
    extras_require={"conversion": ["transformers[torch]>=4.23"], "dev": ["black==23.*", "flake8==6.*", "isort==5.*", "pytest==7.*"]},
    packages=find_packages(),
    include_package_data=True,
)
