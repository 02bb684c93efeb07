import uvicorn
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

app = FastAPI(docs_url='/')


def serve(model_path, server_name='0.0.0.0', server_port=23333, **kwargs):
    uvicorn.run(app=app, host=server_name, port=server_port, log_level='info')
