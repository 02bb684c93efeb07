from .entrypoint import run

__all__ = ['run']
