import os
import argparse
import gradio as gr

from modules.whisper.whisper_factory import WhisperFactory
from modules.translation.nllb_inference import NLLBInference


class App:
    def __init__(self, args):
        self.args = args
        self.app = gr.Blocks(css=CSS, theme=self.args.theme)

    def launch(self):
        self.app.queue(api_open=False).launch(share=self.args.share, server_name=self.args.server_name, server_port=self.args.server_port)


parser = argparse.ArgumentParser()
parser.add_argument('--share', type=bool, default=False, nargs='?', const=True)
parser.add_argument('--server_name', type=str, default=None)
parser.add_argument('--server_port', type=int, default=None)
parser.add_argument('--whisper_model_dir', type=str, default=os.path.join("models", "Whisper"))
parser.add_argument('--output_dir', type=str, default=os.path.join("outputs"))
_args = parser.parse_args()

if __name__ == "__main__":
    app = App(args=_args)
    app.launch()
