"""Issue 15's scale targets from ``bench_scale.py``'s runs: each value next to its limit, the
model-time limit of the same run (the query's NER + embedding) and the value of the run it
replaces, so one file shows what moved.

- search p50 in the big scope (<= 20 ms) and in 100-memory scopes (<= 10 ms), per backend
  and size, and its ratio to the query's models (<= 1.2x);
- PostgreSQL p50 within 1.5x of SQLite's in the big scope at the same size (both backends in
  one file; the ratio is only as fair as the loads of the two runs, printed beside it);
- PostgreSQL's big scope at 1M memories within 2x of its 100k value.
"""

from __future__ import annotations

from typing import Any


def target(value: float | None, limit: float, model_limit: float | None = None) -> dict:
    out: dict[str, Any] = {"value": value, "limit": f"<= {limit}"}
    if model_limit is not None:
        out["model_limit"] = model_limit
    return {**out, "pass": value is not None and value <= limit}


def scale_targets(runs: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """``runs`` as ``bench_scale`` writes them; ``previous`` the targets of the replaced file."""
    out: dict[str, Any] = {}
    by_backend = {run["backend"]: run for run in runs.values() if run.get("sizes")}
    for backend, run in by_backend.items():
        load = run["machine"]["load_average_at_start"][0]
        for point in run["sizes"]:
            out.update(_search_targets(backend, point, load))
    sqlite, postgres = by_backend.get("sqlite"), by_backend.get("postgres")
    if sqlite and postgres:
        out.update(_backend_ratio(sqlite, postgres))
    if postgres:
        out.update(_growth(postgres))
    for name, row in out.items():
        row["previous"] = (previous or {}).get(name, {}).get("value")
    return out


def _search_targets(backend: str, point: dict[str, Any], load: float) -> dict[str, Any]:
    size, models = point["size"], point["query_models"]["p50_ms"]
    out = {}
    for scope, limit in (("big_scope", 20), ("100_scope", 10)):
        search = point.get(f"search_{scope}")
        if not search:
            continue
        p50 = search["p50_ms"]
        name = f"{backend} {size} search_{scope}"
        out[f"{name} p50_ms"] = {**target(p50, limit, models), "load_at_start": load}
        out[f"{name} x_query_models"] = target(round(p50 / models, 2), 1.2)
        embedding = point["query_models"].get("embedding_p50_ms")
        if embedding:  # stricter than the issue: the embedding alone (a search runs no NER)
            out[f"{name} x_query_embedding"] = target(round(p50 / embedding, 2), 1.2)
    return out


def _backend_ratio(sqlite: dict[str, Any], postgres: dict[str, Any]) -> dict[str, Any]:
    lite = {p["size"]: p["search_big_scope"]["p50_ms"] for p in sqlite["sizes"]}
    out = {}
    for point in postgres["sizes"]:
        if point["size"] in lite:
            ratio = round(point["search_big_scope"]["p50_ms"] / lite[point["size"]], 2)
            out[f"postgres/sqlite {point['size']} search_big_scope p50"] = {
                **target(ratio, 1.5),
                "loads_at_start": [
                    sqlite["machine"]["load_average_at_start"][0],
                    postgres["machine"]["load_average_at_start"][0],
                ],
            }
    return out


def _growth(postgres: dict[str, Any]) -> dict[str, Any]:
    p50 = {p["size"]: p["search_big_scope"]["p50_ms"] for p in postgres["sizes"]}
    if 100_000 not in p50 or 1_000_000 not in p50:
        return {}
    ratio = round(p50[1_000_000] / p50[100_000], 2)
    return {"postgres search_big_scope p50 1M / 100k": target(ratio, 2.0)}
