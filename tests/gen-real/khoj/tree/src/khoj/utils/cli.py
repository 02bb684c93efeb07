import argparse
import logging
import pathlib
from importlib.metadata import version

logger = logging.getLogger(__name__)


def cli(args=None):
    parser = argparse.ArgumentParser(description="Start Khoj")
    parser.add_argument("--log-file", default="~/.khoj/khoj.log", type=pathlib.Path)
    parser.add_argument("--verbose", "-v", action="count", default=0)
    parser.add_argument("--host", type=str, default="127.0.0.1")
    parser.add_argument("--port", "-p", type=int, default=42110)
    parser.add_argument("--socket", type=pathlib.Path)
    parser.add_argument("--sslcert", type=str)
    parser.add_argument("--sslkey", type=str)
    parser.add_argument("--version", "-V", action="store_true")
    parser.add_argument("--anonymous-mode", action="store_true", default=False)
    parser.add_argument("--non-interactive", action="store_true", default=False)
    args, remaining_args = parser.parse_known_args(args)
    return args
