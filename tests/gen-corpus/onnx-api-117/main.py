import onnxruntime as ort
from fastapi import FastAPI

app = FastAPI()
session = ort.InferenceSession("model.onnx", providers=["CUDAExecutionProvider"])
