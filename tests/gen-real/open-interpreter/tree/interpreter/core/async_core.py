import os

import janus
import uvicorn
from fastapi import FastAPI

class Server:
    def __init__(self, async_interpreter, host=None, port=None):
        self.app = FastAPI()
        h = host or os.getenv("INTERPRETER_HOST", Server.DEFAULT_HOST)
        p = port or int(os.getenv("INTERPRETER_PORT", Server.DEFAULT_PORT))
        self.config = uvicorn.Config(app=self.app, host=h, port=p)
