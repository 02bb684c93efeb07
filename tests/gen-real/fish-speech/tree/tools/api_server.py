import re

import pyrootutils
import uvicorn
from kui.asgi import Kui
from loguru import logger

pyrootutils.setup_root(__file__, indicator=".project-root", pythonpath=True)

from tools.server.api_utils import parse_args


class API:
    def __init__(self):
        self.args = parse_args()
        self.app = Kui()


if __name__ == "__main__":
    api = API()
    host, port = api.args.listen.split(":")
    uvicorn.run(api.app, host=host, port=int(port), workers=api.args.workers, log_level="info")
