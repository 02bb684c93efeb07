import argparse


def get_parser():
    parser = argparse.ArgumentParser(prog="ocrmypdf")
    parser.add_argument("input_file", metavar="input_pdf_or_image")
    parser.add_argument("output_file", metavar="output_pdf")
    parser.add_argument("-l", "--language", action="append")
    parser.add_argument("-j", "--jobs", type=int)
    return parser
