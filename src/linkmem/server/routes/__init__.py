"""The routers of the server: ``/v1`` (linkmem's own), Mem0-compatible, probes."""
