"""Click CLI definitions for various axolotl commands."""
import click


@click.group()
def cli():
    pass  # subcommands: preprocess, train, inference, merge-lora, evaluate, fetch


def main():
    cli()


if __name__ == "__main__":
    main()
