import onnxruntime as ort
from fastapi import FastAPI

app = FastAPI()
