"""A ``linkmem serve`` process for tests: the real server (``linkmem.server.serve``, uvicorn
on 127.0.0.1) around a ``Memory`` with the test models (FakeEmbedder, capitalised-words
extractor), so answers match the embedded backends'.

Usage: ``python server_worker.py PORT SETTINGS_JSON``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from helpers import CapitalisedWordsExtractor  # noqa: E402

from linkmem import Memory  # noqa: E402
from linkmem.embed.fake import FakeEmbedder  # noqa: E402
from linkmem.server import serve  # noqa: E402


def main() -> None:
    port, settings = int(sys.argv[1]), json.loads(sys.argv[2])

    def open_memory() -> Memory:
        return Memory(embedder=FakeEmbedder(), extractor=CapitalisedWordsExtractor(), **settings)

    serve(open_memory, host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
