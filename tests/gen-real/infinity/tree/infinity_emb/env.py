import os


class __Infinity_EnvManager:
    @property
    def port(self):
        return int(os.getenv("INFINITY_PORT", "7997"))

    @property
    def host(self):
        return os.getenv("INFINITY_HOST", "0.0.0.0")


MANAGER = __Infinity_EnvManager()
