from argparse import ArgumentParser

import torch
import uvicorn
from fastapi import FastAPI, HTTPException
from fastapi.middleware.cors import CORSMiddleware
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import GenerationConfig

app = FastAPI()


def _get_args():
    parser = ArgumentParser()
    parser.add_argument('-c', '--checkpoint-path', type=str, default='Qwen/Qwen-7B-Chat')
    parser.add_argument('--api-auth')
    parser.add_argument('--cpu-only', action='store_true')
    parser.add_argument('--server-port', type=int, default=8000)
    parser.add_argument('--server-name', type=str, default='127.0.0.1')
    return parser.parse_args()


if __name__ == '__main__':
    args = _get_args()
    uvicorn.run(app, host=args.server_name, port=args.server_port, workers=1)
