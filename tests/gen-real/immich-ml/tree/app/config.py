import logging
import os
from pathlib import Path

from gunicorn.arbiter import Arbiter
from pydantic import BaseModel, BaseSettings
from rich.logging import RichHandler
from uvicorn import Server
from uvicorn.workers import UvicornWorker


class Settings(BaseSettings):
    cache_folder: str = "/cache"
    model_ttl: int = 300
    host: str = "0.0.0.0"
    port: int = 3003
    workers: int = 1
    request_threads: int = os.cpu_count() or 4

    class Config:
        env_prefix = "MACHINE_LEARNING_"
        case_sensitive = False


settings = Settings()
log = logging.getLogger("ml.log")


class CustomUvicornWorker(UvicornWorker):
    pass
