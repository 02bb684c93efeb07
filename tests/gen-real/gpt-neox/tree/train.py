"""Train"""
from megatron.neox_arguments import NeoXArgs
from megatron.training import pretrain


def main():
    pass


if __name__ == "__main__":
    main()
