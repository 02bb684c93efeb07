import inspect
import os
import sys

if __name__ == '__main__':
    from jina import Flow

    f = Flow.load_config('torch-flow.yml' if len(sys.argv) == 1 else sys.argv[1])
    with f:
        f.block()
