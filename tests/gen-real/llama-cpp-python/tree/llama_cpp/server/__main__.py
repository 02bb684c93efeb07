import os
import sys
import argparse

import uvicorn

from llama_cpp.server.app import create_app
from llama_cpp.server.settings import ServerSettings, ModelSettings


def main():
    app = create_app(server_settings=server_settings, model_settings=model_settings)
    uvicorn.run(app, host=os.getenv("HOST", server_settings.host), port=int(os.getenv("PORT", server_settings.port)))


if __name__ == "__main__":
    main()
