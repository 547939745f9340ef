"""Looking at runs: prompts stored once per distinct request, the reference answer in the viewer
(collapsed), the runs index of a folder, and the report's facts (judge, dataset, tokens, cost,
partial runs). Real runs against the loopback test server; pages rendered in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from test_viewer import _browse, _dom, _embedded, chromium  # noqa: F401 - chromium is a fixture

from lateralgym.cli import main
from lateralgym.envs import get_benchmark, load_sample_items
from lateralgym.episodes import EpisodeEnd, StepLine, read_log, run, write_report, write_viewer

KEY = "sk-viewer-extras"


def _reply(body: dict[str, Any]) -> str:
    return "yes" if "FULL EXPLANATION (secret" in json.dumps(body) else "Question: Was it a dream?"


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SPLAT run of 2 puzzles x 3 turns, LLM player and LLM judge on one test server."""
    server = ScriptedLLMServer(responder=_reply).start()
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", KEY)
    try:
        return _run(server, tmp_path_factory.mktemp("runs"))
    finally:
        mp.undo()
        server.stop()


def _run(server: ScriptedLLMServer, out: Path) -> Path:
    argv = ["run", "splat", "--player", "openai/player?max_retries=0", "--judge", "openai/judge?max_retries=0"]
    argv += ["--base-url", server.base_url, "--limit", "2", "--max-turns", "3", "--no-cache", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    (run_dir,) = out.iterdir()
    return run_dir


def _calls(run_dir: Path) -> list[dict[str, Any]]:
    calls = []
    for record in read_log(run_dir / "steps.jsonl"):
        if isinstance(record, StepLine):
            calls += [c.model_dump() for c in [record.llm, *record.judge_calls] if c is not None]
    return calls


def test_each_distinct_prompt_is_stored_once_and_the_log_stays_small(llm_run: Path) -> None:
    calls = _calls(llm_run)
    keys = {c["request_key"] for c in calls}
    stored = {p.stem for p in (llm_run / "prompts").glob("*.json")}
    assert len(calls) == 12 and stored == keys  # 2 puzzles x 3 turns x (player + judge)
    log = (llm_run / "steps.jsonl").read_text(encoding="utf-8")
    for key in keys:
        messages = json.loads((llm_run / "prompts" / f"{key}.json").read_text())["messages"]
        assert messages and all({"role", "content"} <= set(m) for m in messages)
        longest = max((m["content"] for m in messages), key=len)
        assert len(longest) > 200 and longest not in log  # the prompt is not repeated in the log
    assert KEY not in "".join(p.read_text() for p in (llm_run / "prompts").iterdir())


def test_the_viewer_embeds_prompts_and_reference_answers(llm_run: Path) -> None:
    data = _embedded(write_viewer(llm_run).read_text(encoding="utf-8"))
    assert set(data["prompts"]) == {c["request_key"] for c in _calls(llm_run)}
    splat = get_benchmark("splat")
    items = {splat.item_id(i): i for i in load_sample_items("splat")}
    assert data["reference_note"] is None and len(data["references"]) == 2
    for item_id, text in data["references"].items():
        assert text == splat.solution_text(items[item_id]) and items[item_id].answer[:40] in text


def test_the_viewer_says_why_the_reference_is_missing(tmp_path: Path) -> None:
    result = run("riddlesense", player="oracle", limit=1, out=tmp_path, progress=False)
    config = result.run_dir / "config.yaml"
    config.write_text(config.read_text().replace("dataset: null", "dataset: /nowhere/rs_dev.jsonl"))
    data = _embedded(write_viewer(result.run_dir).read_text(encoding="utf-8"))
    assert data["references"] == {} and "cannot be read from here" in data["reference_note"]


OPEN_REFERENCE = """<script>
const box = document.getElementById("reference");
const seen = { closed: !box.open, summary: box.querySelector("summary").textContent };
box.open = true;
const summaries = [...document.querySelectorAll("#steps details > summary")];
const calls = summaries.filter((s) => s.textContent.startsWith("messages sent"));
seen.messages = calls.length;
box.scrollIntoView();
const out = document.createElement("pre"); out.id = "driver-result"; out.textContent = JSON.stringify(seen);
document.body.append(out);
</script></body>"""


def _not_blank(png: bytes) -> int:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    idat, at = b"", 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        if png[at + 4 : at + 8] == b"IDAT":
            idat += png[at + 8 : at + 8 + length]
        at += 12 + length
    return len(set(zlib.decompress(idat)))


def test_chromium_shows_the_reference_collapsed_and_the_messages_sent(
    chromium: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    llm_run: Path,
) -> None:
    page = write_viewer(llm_run).read_text(encoding="utf-8")
    driven = tmp_path / "driven.html"
    driven.write_text(page.replace("</body>", OPEN_REFERENCE), encoding="utf-8")
    dump = _browse(chromium, tmp_path, driven, "--dump-dom")
    match = re.search(r'<pre id="driver-result">(.*?)</pre>', dump, re.DOTALL)
    assert match is not None, "the page's script failed"
    seen = json.loads(html.unescape(match.group(1)))
    assert seen["closed"] and seen["summary"] == "Reference answer (hidden from the player)"
    assert seen["messages"] == 6  # 3 turns x (player + judge), each with the messages it was sent
    shot = tmp_path / "reference.png"
    _browse(chromium, tmp_path, driven, f"--screenshot={shot}", "--window-size=1280,900")
    assert _not_blank(shot.read_bytes()) > 50


def test_view_of_a_folder_writes_an_index_of_its_runs(
    chromium: str,  # noqa: F811 - the fixture
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = tmp_path / "runs"
    run("splat", player="oracle", limit=2, out=runs, progress=False)
    run("brainteaser", player="heuristic", limit=3, out=runs, progress=False)
    assert main(["view", str(runs)]) == 0
    assert "the viewer of each of its 2 runs" in capsys.readouterr().out
    index = runs / "index.html"
    driven = tmp_path / "index-driven.html"
    driver = """<script>
const rows = () => [...document.querySelectorAll("#runs tbody tr")].map((tr) => tr.dataset.run);
const seen = { all: rows().length };
const q = document.getElementById("q"); q.value = "oracle"; q.dispatchEvent(new Event("input"));
seen.oracle = rows();
const out = document.createElement("pre"); out.id = "driver-result"; out.textContent = JSON.stringify(seen);
document.body.append(out);
</script></body>"""
    driven.write_text(index.read_text(encoding="utf-8").replace("</body>", driver), encoding="utf-8")
    dump = _browse(chromium, tmp_path, driven, "--dump-dom")
    seen = json.loads(html.unescape(re.search(r'<pre id="driver-result">(.*?)</pre>', dump, re.DOTALL).group(1)))
    splat_dir = next(p for p in runs.iterdir() if p.name.startswith("splat"))
    assert seen == {"all": 2, "oracle": [splat_dir.name]}
    dom = _dom(_browse(chromium, tmp_path, index, "--dump-dom"))
    links = [a["href"] for t, a in dom.elements if t == "a"]
    assert len(links) == 2 and all((runs / Path(h).parent.name / "viewer.html").is_file() for h in links)
    text = _browse(chromium, tmp_path, index, "--dump-dom")
    assert "acc 100.0" in text and "brainteaser (mcq)" in text and "reference" in text
    shot = tmp_path / "index.png"
    _browse(chromium, tmp_path, index, f"--screenshot={shot}", "--window-size=1000,400")
    assert _not_blank(shot.read_bytes()) > 20


def test_the_report_states_judge_dataset_use_and_a_partial_run(llm_run: Path, tmp_path: Path) -> None:
    text = write_report(llm_run).read_text(encoding="utf-8")
    assert "| judge | openai/judge?max_retries=0 |" in text and "| dataset | sample |" in text
    # the scripted server is on 127.0.0.1: an unpriced local model costs nothing
    assert re.search(r"\| player model use \| 6 calls, [\d,]+ \+ [\d,]+ tokens, cost local: free \|", text)
    assert "| judge model use | 6 calls," in text and "| planned episodes | 2 (finished: 2 done) |" in text
    assert "Partial run" not in text
    # the same run cut short: one episode's end record gone
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in ("manifest.json", "config.yaml"):
        (partial / name).write_text((llm_run / name).read_text())
    lines = (llm_run / "steps.jsonl").read_text().splitlines()
    last_end = max(i for i, line in enumerate(lines) if '"episode_end"' in line)
    (partial / "steps.jsonl").write_text("\n".join(lines[:last_end]) + "\n")
    assert sum(isinstance(r, EpisodeEnd) for r in read_log(partial / "steps.jsonl")) == 1
    text = write_report(partial).read_text(encoding="utf-8")
    assert "**Partial run: 1 of 2 planned episodes finished" in text and "--resume" in text
    assert "| planned episodes | 2 (partial: 1 done) |" in text


def test_the_report_says_what_the_offline_splat_judge_cannot_do(tmp_path: Path) -> None:
    result = run("splat", player="heuristic", limit=1, out=tmp_path, progress=False)
    text = write_report(result.run_dir).read_text(encoding="utf-8")
    assert "| judge | reference (this run measures nothing: an offline stand-in for SPLAT's LLM judge" in text
    assert "not measurement" in text
