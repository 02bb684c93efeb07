import fire


def H2O_Fire(component=None):
    fire.Fire(component=component)
