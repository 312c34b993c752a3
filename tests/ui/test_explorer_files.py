"""The explorer's files, without a browser: served at /ui/ with the right content types and
headers, every module they import ships in the package, nothing is loaded from elsewhere,
and the two small routes the page needs answer for each kind of key."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from corpus import CONVERSATION, open_store
from fastapi.testclient import TestClient

from linkmem.server import create_app

STATIC = Path(str(resources.files("linkmem.server").joinpath("static", "ui")))
FILES = sorted(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file())
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
}
#: The one absolute URL allowed: the SVG namespace, a name that is never fetched.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    memory = open_store({"sqlite.path": str(tmp_path / "memory.db")})
    memory.add_batch(CONVERSATION[:2], user_id="alice")
    app = create_app(memory, close_memory=True)
    with TestClient(app, base_url="http://127.0.0.1") as http:  # open stores answer loopback
        http.memory = memory  # type: ignore[attr-defined]
        yield http


def test_the_package_holds_the_page():
    assert {"index.html", "style.css", "js/app.js", "js/graph.js", "js/bars.js"} <= set(FILES)
    assert all(Path(f).suffix in TYPES for f in FILES), FILES


@pytest.mark.parametrize("name", FILES)
def test_each_file_is_served_with_its_type(client: TestClient, name: str):
    response = client.get(f"/ui/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith(TYPES[Path(name).suffix])
    assert response.content == (STATIC / name).read_bytes()
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy


def test_home_and_ui_lead_to_the_page(client: TestClient):
    for path in ("/", "/ui"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code in (302, 307) and response.headers["location"] == "/ui/"
    for path in ("/ui/", "/ui/search", "/ui/{path:path}"):  # no suffix: the page
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="js/app.js">' in page.text


@pytest.mark.parametrize(
    "path", ["/ui/nothing.js", "/ui/../pyproject.toml", "/ui/js/../../ui.py", "/ui/.hidden.css"]
)
def test_only_the_page_files_are_served(client: TestClient, path: str):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("name", FILES)
def test_no_file_reaches_beyond_the_server(name: str):
    text = (STATIC / name).read_text(encoding="utf-8")
    urls = set(re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'`)]*", text)) - {SVG_NAMESPACE}
    assert urls == set(), f"{name} names absolute URLs: {urls}"
    assert not re.search(r"@import|url\(\s*['\"]?(?!data:)[a-z]+:", text), name


def test_every_import_ships_in_the_package():
    """Modules import only each other, by relative path; nothing is imported at run time."""
    imports = re.compile(r"""^import\s[^;]*?\sfrom\s+["']([^"']+)["'];""", re.MULTILINE | re.DOTALL)
    for name in (f for f in FILES if f.endswith(".js")):
        source = STATIC / name
        text = source.read_text(encoding="utf-8")
        for target in imports.findall(text):
            assert target.startswith(("./", "../")), f"{name} imports {target}"
            assert (source.parent / target).resolve().is_file(), f"{name} imports {target}"
        assert "import(" not in text, f"{name} imports at run time"


def test_whoami_on_an_open_store(client: TestClient):
    assert client.get("/v1/whoami").json() == {
        "role": "admin",
        "tenant": None,
        "user_id": None,
        "agent_id": None,
        "open": True,
    }


def test_whoami_and_weights_with_keys(client: TestClient):
    keys = client.memory.keys  # type: ignore[attr-defined]
    _, alice = keys.create("user:alice", "read")
    _, admin = keys.create(None, "admin")
    assert client.get("/v1/whoami").status_code == 401  # keys exist: a key is needed
    assert client.get("/v1/weights").status_code == 401
    assert client.get("/ui/").status_code == 200  # the page itself holds no memory
    me = client.get("/v1/whoami", headers={"Authorization": f"Bearer {alice}"}).json()
    assert me == {
        "role": "read",
        "tenant": "user:alice",
        "user_id": "alice",
        "agent_id": None,
        "open": False,
    }
    boss = client.get("/v1/whoami", headers={"Authorization": f"Bearer {admin}"}).json()
    assert (boss["role"], boss["tenant"], boss["open"]) == ("admin", None, False)
    weights = client.get("/v1/weights", headers={"Authorization": f"Bearer {alice}"}).json()
    config = client.memory.retrieval  # type: ignore[attr-defined]
    assert weights == {
        "cosine_scale": 1.0,
        "dense": config.dense_weight,
        "bm25": config.bm25_weight,
        "max_score": config.max_score,
    }


def test_the_score_parts_the_bars_draw_add_up_to_the_score(client: TestClient):
    """bars.js draws (w_dense * max(dense, 0) + w_bm25 * bm25 + boost + hop + time) /
    max_score."""
    weights = client.get("/v1/weights").json()
    body = {"query": "What does Max love?", "user_id": "alice", "explain": True}
    for hit in client.post("/v1/memories/search", json=body).json()["results"]:
        d = hit["score_details"]
        parts = weights["dense"] * max(d["dense"], 0) + weights["bm25"] * d["bm25"]
        boosts = d["entity_boost"] + d["hop_boost"] + d["time_boost"]
        total = (parts + boosts) / weights["max_score"]
        assert min(total, 1.0) == pytest.approx(hit["score"], abs=1e-5)


def test_browser_tests_skip_with_the_reason_without_chromium(monkeypatch: pytest.MonkeyPatch):
    import browser

    monkeypatch.setattr(browser, "CHROMIUM", Path("/nonexistent/chromium"))
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium chromium-driver"):
        browser.require_chromium()
