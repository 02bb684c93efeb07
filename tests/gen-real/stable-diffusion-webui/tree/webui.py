from __future__ import annotations

import os
import time

from modules import timer
from modules import initialize_util
from modules import initialize


def api_only():
    from fastapi import FastAPI
    from modules.shared_cmd_options import cmd_opts
    app = FastAPI()
    api.launch(server_name=initialize_util.gradio_server_name(), port=cmd_opts.port if cmd_opts.port else 7861)


def webui():
    from modules.shared_cmd_options import cmd_opts
    import modules.ui
    shared.demo = modules.ui.create_ui()
    app, local_url, share_url = shared.demo.launch(
        server_name=initialize_util.gradio_server_name(),
        server_port=cmd_opts.port,
    )


if __name__ == "__main__":
    from modules.shared_cmd_options import cmd_opts

    if cmd_opts.nowebui:
        api_only()
    else:
        webui()
