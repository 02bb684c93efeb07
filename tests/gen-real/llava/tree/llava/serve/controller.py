"""
A controller manages distributed workers.
"""
import argparse

from fastapi import FastAPI, Request
import requests
import uvicorn

app = FastAPI()

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", type=str, default="localhost")
    parser.add_argument("--port", type=int, default=21001)
    parser.add_argument("--dispatch-method", type=str, choices=["lottery", "shortest_queue"], default="shortest_queue")
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
