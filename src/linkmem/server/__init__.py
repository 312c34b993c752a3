"""The REST server: ``linkmem serve``. FastAPI + uvicorn around one ``Memory`` per process.

``app`` builds the app (routes, errors, limits, metrics); ``routes`` holds the ``/v1`` routes,
the Mem0-compatible ones and the probes; who may call what is decided below the server, in
``linkmem.access`` and ``linkmem.tenancy``.
"""

from linkmem.server.app import create_app
from linkmem.server.run import serve

__all__ = ["create_app", "serve"]
