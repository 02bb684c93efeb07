import asyncio
import os
import signal
import sys
import time
from contextlib import asynccontextmanager
from typing import Any, Optional, Union

import infinity_emb
from infinity_emb.args import EngineArgs
from infinity_emb.env import MANAGER
from infinity_emb._optional_imports import CHECK_FASTAPI, CHECK_TYPER, CHECK_UVICORN

if CHECK_TYPER.is_available:
    import typer

    tp = typer.Typer()

    @tp.command("v2")
    def v2(
        model_id: list[str] = MANAGER.model_id,
        host: str = MANAGER.host,
        port: int = MANAGER.port,
        preload_only: bool = MANAGER.preload_only,
    ):
        import uvicorn
        app = create_server(engine_args_list=[], url_prefix="")
        uvicorn.run(app, host=host, port=port, log_level="info", http="httptools")


def cli():
    tp()


if __name__ == "__main__":
    cli()
