import argparse
import easyocr


def parse_args():
    parser = argparse.ArgumentParser(description="Process EasyOCR.")
    parser.add_argument("-l", "--lang", nargs='+', required=True, type=str)
    parser.add_argument("--gpu", type=bool, choices=[True, False], default=True)
    parser.add_argument("-f", "--file", required=True, type=str)
    return parser.parse_args()


def main():
    args = parse_args()
    reader = easyocr.Reader(lang_list=args.lang, gpu=args.gpu)


if __name__ == "__main__":
    main()
