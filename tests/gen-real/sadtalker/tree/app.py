import os, sys
import gradio as gr
from src.gradio_demo import SadTalker


def sadtalker_demo(checkpoint_path='checkpoints', config_path='src/config', warpfn=None):
    sad_talker = SadTalker(checkpoint_path, config_path, lazy_load=True)
    with gr.Blocks(analytics_enabled=False) as sadtalker_interface:
        pass
    return sadtalker_interface


if __name__ == "__main__":
    demo = sadtalker_demo()
    demo.queue()
    demo.launch()
