from pydantic_settings import BaseSettings, SettingsConfigDict

settings = Settings()  # reads .env one level above ./backend/
