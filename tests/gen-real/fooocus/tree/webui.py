import gradio as gr
import random
import os
import json
import time
import shared
import modules.config
import fooocus_version
import args_manager
import launch

shared.gradio_root = gr.Blocks(title=title).queue()

shared.gradio_root.launch(
    inbrowser=args_manager.args.in_browser,
    server_name=args_manager.args.listen,
    server_port=args_manager.args.port,
    share=args_manager.args.share,
    allowed_paths=[modules.config.path_outputs],
)
