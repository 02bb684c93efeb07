from modules import launch_utils

prepare_environment = launch_utils.prepare_environment
start = launch_utils.start


def main():
    prepare_environment()
    start()


if __name__ == "__main__":
    main()
