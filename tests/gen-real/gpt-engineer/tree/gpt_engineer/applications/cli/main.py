import logging
import os

from pathlib import Path
from importlib.util import find_spec
import openai
import typer
import toml
from dotenv import load_dotenv

from gpt_engineer.applications.cli.cli_agent import CliAgent

with open("pyproject.toml", "r") as file:
    pyproject = toml.load(file)

app = typer.Typer()

@app.command()
def main(project_path: str = typer.Argument("projects/example", help="path")):
    ...

if __name__ == "__main__":
    app()
