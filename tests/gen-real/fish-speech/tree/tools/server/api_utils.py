from argparse import ArgumentParser


def parse_args():
    parser = ArgumentParser()
    parser.add_argument("--mode", type=str, choices=["agent", "tts"], default="tts")
    parser.add_argument("--llama-checkpoint-path", type=str, default="checkpoints/fish-speech-1.5")
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--listen", type=str, default="127.0.0.1:8080")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--api-key", type=str, default=None)
    return parser.parse_args()
