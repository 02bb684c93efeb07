import argparse

# The parser's Gradio group (the model, loader and extension options are left out).
parser = argparse.ArgumentParser()
group = parser.add_argument_group('Gradio')
group.add_argument('--listen', action='store_true', help='Make the web UI reachable from your local network.')
group.add_argument('--listen-port', type=int, help='The listening port that the server will use.')
group.add_argument('--listen-host', type=str, help='The hostname that the server will use.')
group.add_argument('--share', action='store_true', help='Create a public URL.')
args = parser.parse_args()
