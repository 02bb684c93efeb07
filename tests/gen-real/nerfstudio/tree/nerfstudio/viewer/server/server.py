"""ns-bridge-server: the websocket bridge for the web viewer."""
import tyro


def entrypoint():
    pass
