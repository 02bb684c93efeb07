import os

import click
import httpx
from dotenv import load_dotenv


@click.command()
@click.option("--host", default="0.0.0.0", help="Host for the server to listen on.", envvar="HOST")
@click.option("--port", default=4000, help="Port to bind the server to.", envvar="PORT")
@click.option("--num_workers", default=1, envvar="NUM_WORKERS")
@click.option("--config", "-c", default=None)
@click.option("--detailed_debug", default=False, is_flag=True)
@click.option("--run_gunicorn", default=False, is_flag=True)
def run_server(host, port, num_workers, config, detailed_debug, run_gunicorn):
    import uvicorn
    uvicorn.run("litellm.proxy.proxy_server:app", host=host, port=port)


if __name__ == "__main__":
    run_server()
