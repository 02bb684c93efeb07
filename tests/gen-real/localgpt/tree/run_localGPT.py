import os
import logging
import click
import torch
from langchain.chains import RetrievalQA
from langchain.vectorstores import Chroma

from constants import EMBEDDING_MODEL_NAME, PERSIST_DIRECTORY, MODEL_ID, MODEL_BASENAME, MODELS_PATH


@click.command()
@click.option("--device_type", default="cuda" if torch.cuda.is_available() else "cpu")
def main(device_type):
    if not os.path.exists(MODELS_PATH):
        os.mkdir(MODELS_PATH)


if __name__ == "__main__":
    main()
