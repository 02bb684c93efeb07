import logging
import os

import click
import torch
from langchain.text_splitter import RecursiveCharacterTextSplitter
from langchain.vectorstores import Chroma

from constants import CHROMA_SETTINGS, DOCUMENT_MAP, EMBEDDING_MODEL_NAME, INGEST_THREADS, PERSIST_DIRECTORY, SOURCE_DIRECTORY


@click.command()
@click.option("--device_type", default="cuda" if torch.cuda.is_available() else "cpu")
def main(device_type):
    pass


if __name__ == "__main__":
    main()
