from infinity_emb.engine import AsyncEmbeddingEngine, AsyncEngineArray
from infinity_emb.args import EngineArgs
