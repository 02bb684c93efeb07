from typing import TYPE_CHECKING, Any

import torch

from litgpt.deploy.serve import run_server as serve_fn

if TYPE_CHECKING:
    from jsonargparse import ArgumentParser


def main() -> None:
    # jsonargparse subcommands: download, chat, finetune {lora,qlora,full,adapter,adapter_v2},
    # pretrain, generate {base,full,lora,adapter,adapter_v2,sequentially,tp}, convert, merge_lora,
    # serve (litgpt.deploy.serve.run_server), evaluate
    pass


if __name__ == "__main__":
    main()
