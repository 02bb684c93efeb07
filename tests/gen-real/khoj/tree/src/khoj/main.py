"""Main module for Khoj
isort:skip_file
"""
import logging
import os
import sys
import threading

from rich.logging import RichHandler

import uvicorn
import django
from apscheduler.schedulers.background import BackgroundScheduler
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles
import schedule

from django.core.asgi import get_asgi_application
from django.core.management import call_command

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "khoj.app.settings")
django.setup()

# runs `migrate` and `collectstatic` at import

app = FastAPI(docs_url=None)
django_app = get_asgi_application()

from khoj.utils.cli import cli  # noqa: E402


def run(should_start_server=True):
    # parses cli args, sets up the scheduler, mounts Django at /server and
    # static files, then uvicorn.run(app, host=args.host, port=args.port)
    pass


if __name__ == "__main__":
    run()
else:
    if "gunicorn" in sys.modules:
        run(should_start_server=False)
