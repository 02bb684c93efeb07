import os
import torch
import fire


def main(base_model: str = '', load_8bit: bool = False, share: bool = False, server_name: str = "0.0.0.0", user_path: str = None, save_dir: str = None):
    from gradio_runner import go_gradio
    # demo.launch(share=share, server_name=server_name, server_port=GRADIO_SERVER_PORT (default 7860))
