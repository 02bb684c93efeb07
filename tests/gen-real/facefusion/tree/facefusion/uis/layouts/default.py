import gradio


def render() -> gradio.Blocks:
	with gradio.Blocks() as layout:
		return layout


def run(ui : gradio.Blocks) -> None:
	ui.launch(favicon_path = 'facefusion.ico', inbrowser = False)
