import os
import tempfile
from pathlib import Path

from celery.schedules import crontab
from dateparser.languages.loader import LocaleDataLoader
from dotenv import load_dotenv

BASE_DIR: Path = Path(__file__).resolve().parent.parent

STATIC_ROOT = Path(os.getenv("PAPERLESS_STATICDIR", BASE_DIR.parent / "static"))
MEDIA_ROOT = Path(os.getenv("PAPERLESS_MEDIA_ROOT", BASE_DIR.parent / "media"))
DATA_DIR = Path(os.getenv("PAPERLESS_DATA_DIR", BASE_DIR.parent / "data"))
CONSUMPTION_DIR = Path(os.getenv("PAPERLESS_CONSUMPTION_DIR", BASE_DIR.parent / "consume"))
SCRATCH_DIR = Path(os.getenv("PAPERLESS_SCRATCH_DIR", Path(tempfile.gettempdir()) / "paperless"))

ROOT_URLCONF = "paperless.urls"
WSGI_APPLICATION = "paperless.wsgi.application"
ASGI_APPLICATION = "paperless.asgi.application"

_CELERY_REDIS_URL = os.getenv("PAPERLESS_REDIS", "redis://localhost:6379")
