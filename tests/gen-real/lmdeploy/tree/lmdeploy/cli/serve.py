import argparse


class SubCliServe:
    """Serve LLMs and interact on terminal or web UI."""

    @staticmethod
    def add_parser_api_server(subparsers):
        parser = subparsers.add_parser('api_server')
        parser.add_argument('model_path', type=str)
        parser.add_argument('--server-name', type=str, default='0.0.0.0')
        parser.add_argument('--server-port', type=int, default=23333)
        parser.add_argument('--tp', type=int, default=1)
        parser.add_argument('--backend', type=str, default='turbomind', choices=['pytorch', 'turbomind'])

    @staticmethod
    def add_parser_gradio(subparsers):
        parser = subparsers.add_parser('gradio')
        parser.add_argument('model_path_or_server', type=str)
        parser.add_argument('--server-name', type=str, default='0.0.0.0')
        parser.add_argument('--server-port', type=int, default=6006)

    @staticmethod
    def add_parsers():
        pass
