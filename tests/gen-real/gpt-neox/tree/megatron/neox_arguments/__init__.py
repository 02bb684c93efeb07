import yaml


class NeoXArgs:
    pass
