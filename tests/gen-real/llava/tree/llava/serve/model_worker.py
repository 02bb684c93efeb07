"""
A model worker executes the model.
"""
import argparse

from fastapi import FastAPI, Request, BackgroundTasks
import requests
import torch
import uvicorn
from transformers import TextIteratorStreamer

from llava.model.builder import load_pretrained_model

app = FastAPI()

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", type=str, default="localhost")
    parser.add_argument("--port", type=int, default=21002)
    parser.add_argument("--worker-address", type=str, default="http://localhost:21002")
    parser.add_argument("--controller-address", type=str, default="http://localhost:21001")
    parser.add_argument("--model-path", type=str, default="facebook/opt-350m")
    parser.add_argument("--load-8bit", action="store_true")
    parser.add_argument("--load-4bit", action="store_true")
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
