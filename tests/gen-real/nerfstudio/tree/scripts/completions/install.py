"""ns-install-cli: installs shell completions for the ns-* commands."""
import tyro


def entrypoint():
    pass


if __name__ == "__main__":
    entrypoint()
