from pydantic_settings import BaseSettings


class ServerSettings(BaseSettings):
    host: str = "localhost"
    port: int = 8000
