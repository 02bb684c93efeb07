import os

from chromadb.config import Settings
from langchain.document_loaders import CSVLoader, PyPDFLoader, TextLoader, UnstructuredExcelLoader, Docx2txtLoader

ROOT_DIRECTORY = os.path.dirname(os.path.realpath(__file__))
SOURCE_DIRECTORY = f"{ROOT_DIRECTORY}/SOURCE_DOCUMENTS"
PERSIST_DIRECTORY = f"{ROOT_DIRECTORY}/chroma"
MODELS_PATH = "./models"
DEVICE_TYPE = "cuda"
EMBEDDING_MODEL_NAME = "BAAI/bge-large-en-v1.5"
MODEL_ID = "TheBloke/dolphin-2.6-mistral-7B-dpo-GPTQ"
MODEL_BASENAME = "model.safetensors"
