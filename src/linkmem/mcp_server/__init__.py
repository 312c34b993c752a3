"""linkmem as an MCP server: the ``Memory`` calls as tools a model can use.

``linkmem mcp`` serves them over stdio to one local client, bound to one scope
(:mod:`linkmem.mcp_server.stdio`); ``linkmem serve`` also answers MCP over streamable HTTP at
``/mcp``, each request scoped by its API key like the REST routes
(:mod:`linkmem.mcp_server.http`). The tools (:mod:`linkmem.mcp_server.tools`) are thin: the
caller's view of ``Memory`` in, one call, compact text plus the call's JSON out.

Named ``mcp_server`` so that it is never confused with the ``mcp`` SDK it is built on.
"""
