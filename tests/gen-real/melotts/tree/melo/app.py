import gradio as gr
import os, torch, io
from melo.api import TTS
import tempfile
import click
device = 'auto'
models = {
    'EN': TTS(language='EN', device=device),
    'ZH': TTS(language='ZH', device=device),
}

with gr.Blocks() as demo:
    gr.Markdown('# MeloTTS WebUI')


@click.command()
@click.option('--share', '-s', is_flag=True, show_default=True, default=False)
@click.option('--host', '-h', default=None)
@click.option('--port', '-p', type=int, default=None)
def main(share, host, port):
    demo.queue(api_open=False).launch(show_api=False, share=share, server_name=host, server_port=port)

if __name__ == "__main__":
    main()
