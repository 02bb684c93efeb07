import asyncio
import os
from aiohttp import web
import folder_paths
import execution
import nodes
