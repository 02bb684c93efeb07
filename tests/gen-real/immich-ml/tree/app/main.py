import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import orjson
from fastapi import Depends, FastAPI, Form, HTTPException, UploadFile
from fastapi.responses import ORJSONResponse
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidProtobuf, NoSuchFile
from starlette.formparsers import MultiPartParser

from .config import log, settings
from .models.cache import ModelCache


@asynccontextmanager
async def lifespan(_: FastAPI):
    # thread pool, idle shutdown task, model preloading
    yield


app = FastAPI(lifespan=lifespan)


@app.get("/ping")
def ping() -> str:
    return "pong"
