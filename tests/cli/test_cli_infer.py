"""``linkmem add --infer`` and the LLM line of ``linkmem doctor``, against a scripted LLM."""

from __future__ import annotations

import pytest
from cli_helpers import data, run
from llm_fixtures import Reply, facts


@pytest.fixture
def llm_env(llm_server, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LINKMEM_LLM_BASE_URL", llm_server.url)
    monkeypatch.setenv("LINKMEM_LLM_MODEL", "scripted")
    return llm_server


def test_add_infer_stores_the_extracted_facts(llm_env):
    llm_env.queue(facts("Alice lives in Berlin"))
    (event,) = data("add", "I live in Berlin", "--user", "alice", "--infer")["results"]
    assert event["event"] == "ADD" and event["memory"] == "Alice lives in Berlin"


def test_add_infer_failure_exits_1_and_names_the_error(llm_env):
    llm_env.queue(Reply(content="not json"))
    result = run("add", "I live in Berlin", "--user", "alice", "--infer", code=1)
    assert "not valid JSON" in result.stderr
    assert data("list", "--user", "alice")["results"] == []


def test_add_infer_without_llm_settings_exits_1():
    result = run("add", "I live in Berlin", "--user", "alice", "--infer", code=1)
    assert "LINKMEM_LLM_BASE_URL" in result.stderr


def test_doctor_shows_the_llm_and_whether_it_answers(llm_env):
    llm_env.queue(Reply(content="OK"))
    report = data("doctor")
    (check,) = [c for c in report["checks"] if c["name"] == "LLM answers"]
    assert check["ok"] and "scripted" in check["detail"]
    assert report["status"]["llm"].startswith("scripted at http://127.0.0.1")
    llm_env.queue(Reply(status=401))
    report = data("doctor", code=1)
    (check,) = [c for c in report["checks"] if c["name"] == "LLM answers"]
    assert not check["ok"] and "401" in check["detail"]


def test_doctor_without_an_llm_is_still_ok():
    report = data("doctor")
    (check,) = [c for c in report["checks"] if c["name"] == "LLM answers"]
    assert check["ok"] and "not configured" in check["detail"]
