"""ns-process-data: runs COLMAP (and ffmpeg for videos) on captured images."""
import tyro


def entrypoint():
    pass


if __name__ == "__main__":
    entrypoint()
