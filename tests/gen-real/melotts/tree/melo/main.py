import click
import warnings
import os


@click.command
@click.argument('text')
@click.argument('output_path')
@click.option("--file", '-f', is_flag=True, show_default=True, default=False)
@click.option('--language', '-l', default='EN')
@click.option('--speaker', '-spk', default='EN-Default')
@click.option('--speed', '-s', default=1.0)
@click.option('--device', '-d', default='auto')
def main(text, file, output_path, language, speaker, speed, device):
    from melo.api import TTS
    model = TTS(language=language, device=device)
