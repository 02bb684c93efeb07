from logging import _nameToLevel as logLevelMap
from pathlib import Path
from typing import Optional

import click
from forge.logging.config import LogFormatName

from .telemetry import setup_telemetry

@click.group(invoke_without_command=True)
def cli(ctx): ...

@cli.command()
def run(): ...

@cli.command()
def serve(): ...  # Agent Protocol server

if __name__ == "__main__":
    cli()
