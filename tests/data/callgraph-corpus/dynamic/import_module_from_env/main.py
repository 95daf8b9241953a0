import importlib
import os

backend = importlib.import_module(os.environ.get("APP_BACKEND", "default_backend"))
backend.func()
