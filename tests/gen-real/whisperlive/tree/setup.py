import pathlib
from setuptools import find_packages, setup
from whisper_live.__version__ import __version__

HERE = pathlib.Path(__file__).parent

setup(
    name="whisper_live",
    version=__version__,
    description="A nearly-live implementation of OpenAI's Whisper.",
    include_package_data=True,
    url="https://github.com/collabora/WhisperLive",
    license="MIT",
    packages=find_packages(
        exclude=(
            "examples",
            "Audio-Transcription-Chrome",
            "Audio-Transcription-Firefox",
            "requirements",
            "whisper-finetuning"
        )
    ),
    install_requires=[
        "PyAudio",
        "faster-whisper==1.1.0",
        "torch",
        "torchaudio",
        "websockets",
        "onnxruntime==1.17.0",
        "scipy",
        "websocket-client",
        "numba",
        "openai-whisper==20240930",
        "kaldialign",
        "soundfile",
        "tokenizers==0.20.3"
    ],
    python_requires=">=3.8"
)
